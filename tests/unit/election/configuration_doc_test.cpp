// docs/configuration.md is the one page that states the defaults (the others link to it). These
// tests read its tables and compare each default with the library's, so that a changed default
// fails here until the page says so too.
#include <s3lect/config.hpp>
#include <s3lect/health.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/metrics_server.hpp>
#include <s3lect/s3_client.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using std::chrono::milliseconds;

std::string configuration_page() {
  std::ifstream file(S3LECT_DOCS_DIR "/configuration.md");
  EXPECT_TRUE(file.is_open()) << S3LECT_DOCS_DIR "/configuration.md";
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The lines under the heading `heading` (a whole line, e.g. "## `s3_config`"), up to the next
/// heading of the same or a higher level.
std::vector<std::string> section(const std::string& page, const std::string& heading) {
  const std::size_t depth = heading.find(' ');  // the number of '#'
  std::istringstream lines(page);
  std::vector<std::string> found;
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == heading) {
      inside = true;
      continue;
    }
    const bool ends_section = line.starts_with("#") && line.find(' ') <= depth;
    if (inside && ends_section) break;
    if (inside) found.push_back(line);
  }
  EXPECT_FALSE(found.empty()) << "no section " << heading;
  return found;
}

/// The cells of a Markdown table row, trimmed; empty for any other line.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  if (!line.starts_with("|")) return out;
  std::istringstream parts(line.substr(1));
  for (std::string cell; std::getline(parts, cell, '|');) {
    const auto first = cell.find_first_not_of(' ');
    const auto last = cell.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return out;
}

/// The "default" cell of the row whose first cell names `field` (in backquotes, maybe followed
/// by a symbol such as "(L)").
std::string default_of(const std::vector<std::string>& lines, const std::string& field) {
  for (const std::string& line : lines) {
    const std::vector<std::string> row = cells(line);
    if (row.size() >= 2 && row[0].starts_with("`" + field + "`")) return row[1];
  }
  ADD_FAILURE() << "no row for " << field;
  return {};
}

/// The leading "N unit" of a cell ("15 s", "100 ms", "1.2 s", "2 min", "0: …") in milliseconds.
std::optional<milliseconds> leading_duration(const std::string& text) {
  static const std::regex pattern{R"(^\{?(\d+(?:\.\d+)?)(?: (ms|s|min|h)\b)?)"};
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  const double number = std::stod(match[1].str());
  const std::string unit = match[2].str();
  if (unit.empty() && number != 0) return std::nullopt;
  const double scale = unit == "ms" ? 1 : unit == "s" ? 1e3 : unit == "min" ? 6e4 : 3.6e6;
  return milliseconds{static_cast<milliseconds::rep>(number * scale + 0.5)};
}

/// Every duration of a list cell such as "{100 ms, 1 s}" or "13 ms, 133 ms".
std::vector<milliseconds> durations(std::string text) {
  std::vector<milliseconds> out;
  for (char& c : text) {
    if (c == '{' || c == '}') c = ' ';
  }
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    if (const auto value = leading_duration(part.substr(part.find_first_not_of(' '))))
      out.push_back(*value);
  }
  return out;
}

/// A size cell ("8 KiB", "1 MiB", "256") in bytes or units.
std::size_t size_of(const std::string& text) {
  std::size_t value = std::stoul(text);
  if (text.find("KiB") != std::string::npos) value *= 1024;
  if (text.find("MiB") != std::string::npos) value *= 1024 * 1024;
  return value;
}

milliseconds duration_of(const std::vector<std::string>& lines, const std::string& field) {
  const std::string text = default_of(lines, field);
  const auto value = leading_duration(text);
  EXPECT_TRUE(value.has_value()) << field << ": not a duration: " << text;
  return value.value_or(milliseconds{-1});
}

TEST(ConfigurationDoc, ElectorConfigDefaults) {
  const auto lines = section(configuration_page(), "## `elector_config`");
  const elector_config defaults;
  EXPECT_EQ(duration_of(lines, "lease"), defaults.lease);
  EXPECT_EQ(duration_of(lines, "renew_deadline"), defaults.renew_deadline);
  EXPECT_EQ(duration_of(lines, "frequent_interval"), defaults.frequent_interval);
  EXPECT_EQ(duration_of(lines, "infrequent_interval"), defaults.infrequent_interval);
  EXPECT_EQ(
      default_of(lines, "s3_follower_reads"),
      defaults.s3_follower_reads == follower_reads::first_hand ? "`first_hand`" : "`economy`");
  EXPECT_EQ(duration_of(lines, "max_clock_skew"), defaults.max_clock_skew);
  EXPECT_EQ(duration_of(lines, "acquire_grace"), defaults.acquire_grace);
  EXPECT_EQ(duration_of(lines, "request_timeout"), defaults.request_timeout);
  EXPECT_EQ(durations(default_of(lines, "retry.delays")), defaults.retry.delays);
  EXPECT_EQ(duration_of(lines, "peer.timeout"), defaults.peer.timeout);
  EXPECT_EQ(default_of(lines, "peer.health_path"), "`" + defaults.peer.health_path + "`");
  EXPECT_EQ(default_of(lines, "peer.enabled"), defaults.peer.enabled ? "true" : "false");
  EXPECT_EQ(default_of(lines, "peer.watch"), defaults.peer.watch ? "true" : "false");
  EXPECT_EQ(default_of(lines, "peer.trust_unauthenticated_store"),
            defaults.peer.trust_unauthenticated_store ? "true" : "false");
  EXPECT_EQ(default_of(lines, "peer.tls.verify_peer"),
            defaults.peer.tls.verify_peer ? "true" : "false");
}

TEST(ConfigurationDoc, CoordinationDefaults) {
  const auto lines = section(configuration_page(), "### Coordination");
  const elector_config defaults;
  EXPECT_EQ(default_of(lines, "coordination.priority"),
            std::to_string(defaults.coordination.priority));
  EXPECT_EQ(default_of(lines, "coordination.max_ranks"),
            std::to_string(defaults.coordination.max_ranks));
  EXPECT_FALSE(defaults.coordination.handover_window);
  EXPECT_NE(default_of(lines, "coordination.handover_window").find("unset: F / 5"),
            std::string::npos);
  EXPECT_EQ(defaults.handover_window(), defaults.frequent_interval / 5)
      << "F / 5, as the page says, 1 s at the defaults";
  EXPECT_NE(default_of(lines, "coordination.handover_window").find("(1 s at the defaults"),
            std::string::npos);
  EXPECT_FALSE(defaults.coordination.rank_step);
  EXPECT_NE(default_of(lines, "coordination.rank_step").find("else 0"), std::string::npos);
  EXPECT_EQ(defaults.rank_step(), milliseconds{0}) << "no peer.watch by default";
}

TEST(ConfigurationDoc, ForLeaseTable) {
  const auto lines = section(configuration_page(), "### One knob: the lease");
  int rows = 0;
  for (const std::string& line : lines) {
    const std::vector<std::string> row = cells(line);
    const auto lease = row.size() >= 7 ? leading_duration(row[0]) : std::nullopt;
    if (!lease) continue;
    SCOPED_TRACE(line);
    ++rows;
    const elector_config derived = elector_config::for_lease(*lease);
    EXPECT_EQ(leading_duration(row[1]), derived.renew_deadline);
    EXPECT_EQ(leading_duration(row[2]), derived.frequent_interval);
    EXPECT_EQ(leading_duration(row[3]), derived.infrequent_interval);
    EXPECT_EQ(leading_duration(row[4]), derived.request_timeout);
    EXPECT_EQ(durations(row[5]), derived.retry.delays);
    EXPECT_EQ(leading_duration(row[6]), derived.peer.timeout);
  }
  EXPECT_GE(rows, 5);
}

TEST(ConfigurationDoc, S3ConfigDefaults) {
  const auto lines = section(configuration_page(), "## `s3_config`");
  const s3_config defaults;
  EXPECT_EQ(duration_of(lines, "request_timeout"), defaults.request_timeout);
  EXPECT_EQ(size_of(default_of(lines, "max_body_bytes")), defaults.max_body_bytes);
  EXPECT_EQ(size_of(default_of(lines, "max_idle_connections")), defaults.max_idle_connections);
}

/// The limits the health and metrics servers share, each in its own table.
template <class ServerConfig>
void expect_server_limits(const std::vector<std::string>& lines, const ServerConfig& defaults) {
  EXPECT_EQ(size_of(default_of(lines, "max_header_bytes")), defaults.max_header_bytes);
  EXPECT_EQ(duration_of(lines, "read_timeout"), defaults.read_timeout);
  EXPECT_EQ(duration_of(lines, "first_request_timeout"), defaults.first_request_timeout);
  EXPECT_EQ(duration_of(lines, "idle_timeout"), defaults.idle_timeout);
  EXPECT_EQ(size_of(default_of(lines, "max_connections")), defaults.max_connections);
  EXPECT_EQ(size_of(default_of(lines, "max_connections_per_source")),
            defaults.max_connections_per_source);
}

TEST(ConfigurationDoc, HealthServerConfigDefaults) {
  const auto lines = section(configuration_page(), "## `health_server_config`");
  const health_server_config defaults;
  expect_server_limits(lines, defaults);
  EXPECT_EQ(default_of(lines, "handler.path"), "`" + defaults.handler.path + "`");
  EXPECT_EQ(size_of(default_of(lines, "handler.max_watchers")), defaults.handler.max_watchers);
  EXPECT_EQ(size_of(default_of(lines, "handler.max_watchers_per_source")),
            defaults.handler.max_watchers_per_source);
  EXPECT_EQ(duration_of(lines, "handler.max_watch"), defaults.handler.max_watch);
}

TEST(ConfigurationDoc, MetricsServerConfigDefaults) {
  const auto lines = section(configuration_page(), "## `metrics_server_config`");
  const metrics_server_config defaults;
  EXPECT_EQ(default_of(lines, "path"), "`" + defaults.path + "`");
  expect_server_limits(lines, defaults);
}

TEST(ConfigurationDoc, LivenessLimitsDefaults) {
  const auto lines = section(configuration_page(), "## `liveness_limits`");
  const liveness_limits defaults;
  EXPECT_EQ(duration_of(lines, "max_loop_stall"), defaults.max_loop_stall);
  EXPECT_EQ(duration_of(lines, "deadline_grace"), defaults.deadline_grace);
  // With the defaults, 2 × (I + W), as the page works it out in seconds with one decimal.
  const elector_config config;
  const milliseconds stall =
      2 * (config.infrequent_interval + config.retry.worst_case(config.request_timeout));
  const std::string stated = std::to_string(stall.count() / 1000) + "." +
                             std::to_string(stall.count() / 100 % 10) + " s with the defaults";
  EXPECT_NE(default_of(lines, "max_loop_stall").find(stated), std::string::npos) << stated;
}

}  // namespace
}  // namespace s3lect
