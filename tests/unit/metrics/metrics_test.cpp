// Metrics in the Prometheus text exposition format: a strict parser written here (independent of
// the renderer) checks every line of what s3lect renders, and the values follow electors over
// the in-memory storage as they acquire, renew, hand over and demote themselves. Then the two
// routes that serve the text: metrics_server (plain HTTP) and health_server's /metrics (TLS).
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>

#include "support/background_io.hpp"
#include "support/elector_group.hpp"
#include "support/fake_leadership_source.hpp"
#include "support/test_certificates.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using label_map = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// The parser: text format 0.0.4 as https://prometheus.io/docs/instrumenting/exposition_formats/
// describes it, strict where the spec is loose (every family needs its TYPE, no blank lines).

struct exposition {
  std::map<std::string, std::string> types;  ///< family → counter|gauge|histogram|…
  std::map<std::string, std::string> helps;  ///< family → help text (unescaped)
  std::map<std::string, double> samples;     ///< series key (see series_key) → value
  std::map<std::string, label_map> labels;   ///< series key → its labels
  std::vector<std::string> errors;           ///< "line N: what is wrong"

  /// The value of a series, NaN when absent.
  double value(const std::string& name, const label_map& labels) const;
  /// Every series of `name`, by its labels.
  std::vector<std::pair<label_map, double>> series(const std::string& name) const;
};

std::string series_key(const std::string& name, const label_map& labels) {
  std::string key = name + "{";
  for (const auto& [label, value] : labels) key += label + "=" + value + "\x1f";
  return key + "}";
}

double exposition::value(const std::string& name, const label_map& labels) const {
  const auto found = samples.find(series_key(name, labels));
  return found == samples.end() ? std::nan("") : found->second;
}

std::vector<std::pair<label_map, double>> exposition::series(const std::string& name) const {
  std::vector<std::pair<label_map, double>> found;
  for (const auto& [key, value] : samples) {
    if (key.compare(0, name.size() + 1, name + "{") == 0) {
      found.emplace_back(labels.at(key), value);
    }
  }
  return found;
}

bool is_metric_name(const std::string& name) {
  if (name.empty()) return false;
  const auto first = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  if (!first(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return first(c) || std::isdigit(static_cast<unsigned char>(c));
  });
}

bool is_label_name(const std::string& name) {
  if (name.empty() || name.compare(0, 2, "__") == 0) return false;
  const auto first = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!first(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return first(c) || std::isdigit(static_cast<unsigned char>(c));
  });
}

/// A sample value: a Go ParseFloat number, or +Inf, -Inf, NaN.
std::optional<double> parse_value(const std::string& text) {
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  if (text == "NaN") return std::nan("");
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

/// The family a sample belongs to: its own name, or for _bucket/_sum/_count a histogram's.
std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string tail = suffix;
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0) {
      const std::string base = name.substr(0, name.size() - tail.size());
      const auto type = types.find(base);
      if (type != types.end() && (type->second == "histogram" || type->second == "summary")) {
        return base;
      }
    }
  }
  return name;
}

exposition parse_exposition(const std::string& text) {
  exposition out;
  if (!text.empty() && text.back() != '\n')
    out.errors.push_back("the text must end with a line feed");
  std::istringstream in(text);
  std::string line;
  int number = 0;
  std::string current_family;
  std::set<std::string> finished_families;  // groups already left: a family is one group
  const auto fail = [&](const std::string& what) {
    out.errors.push_back("line " + std::to_string(number) + ": " + what + ": " + line);
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      fail("empty line");
      continue;
    }
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, name;
      words >> hash >> keyword >> name;
      if (hash != "#" || (keyword != "HELP" && keyword != "TYPE")) continue;  // a comment
      if (!is_metric_name(name)) {
        fail("bad metric name in " + keyword);
        continue;
      }
      const std::string prefix = "# " + keyword + " " + name + " ";
      if (line.compare(0, prefix.size(), prefix) != 0) {
        fail(keyword + " needs exactly one space between its parts");
        continue;
      }
      const std::string rest = line.substr(prefix.size());
      if (name != current_family) {
        if (!current_family.empty()) finished_families.insert(current_family);
        if (finished_families.count(name) != 0) fail(keyword + " of a family already ended");
        current_family = name;
      }
      if (keyword == "HELP") {
        std::string help;
        for (std::size_t i = 0; i < rest.size(); ++i) {
          if (rest[i] != '\\') {
            help += rest[i];
          } else if (i + 1 < rest.size() && rest[i + 1] == '\\') {
            help += '\\';
            ++i;
          } else if (i + 1 < rest.size() && rest[i + 1] == 'n') {
            help += '\n';
            ++i;
          } else {
            fail("bad escape in HELP");
          }
        }
        if (!out.helps.emplace(name, help).second) fail("second HELP");
        if (out.types.count(name) != 0) fail("HELP after TYPE (ours puts HELP first)");
      } else {
        static const std::set<std::string> kinds{"counter", "gauge", "histogram", "summary",
                                                 "untyped"};
        if (kinds.count(rest) == 0) fail("unknown TYPE");
        if (!out.types.emplace(name, rest).second) fail("second TYPE");
      }
      continue;
    }

    // name[{labels}] value [timestamp]
    std::size_t at = 0;
    while (at < line.size() && line[at] != '{' && line[at] != ' ') ++at;
    const std::string name = line.substr(0, at);
    if (!is_metric_name(name)) {
      fail("bad metric name");
      continue;
    }
    const std::string family = family_of(name, out.types);
    if (out.types.count(family) == 0) fail("sample before its TYPE");
    if (family != current_family) fail("sample outside its family's group");
    label_map labels;
    bool good = true;
    if (at < line.size() && line[at] == '{') {
      ++at;
      while (good && at < line.size() && line[at] != '}') {
        std::size_t eq = line.find('=', at);
        if (eq == std::string::npos) {
          good = false;
          break;
        }
        const std::string label = line.substr(at, eq - at);
        if (!is_label_name(label)) fail("bad label name '" + label + "'");
        if (eq + 1 >= line.size() || line[eq + 1] != '"') {
          good = false;
          break;
        }
        std::string value;
        std::size_t i = eq + 2;
        bool closed = false;
        for (; i < line.size(); ++i) {
          const char c = line[i];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c != '\\') {
            value += c;
            continue;
          }
          if (i + 1 >= line.size()) break;
          const char escaped = line[++i];
          if (escaped == '\\' || escaped == '"') {
            value += escaped;
          } else if (escaped == 'n') {
            value += '\n';
          } else {
            fail("bad escape in a label value");
          }
        }
        if (!closed) {
          good = false;
          break;
        }
        if (!labels.emplace(label, value).second) fail("label '" + label + "' twice");
        at = i + 1;
        if (at < line.size() && line[at] == ',') ++at;
      }
      if (!good || at >= line.size() || line[at] != '}') {
        fail("malformed labels");
        continue;
      }
      ++at;
    }
    if (at >= line.size() || line[at] != ' ') {
      fail("no space before the value");
      continue;
    }
    std::istringstream rest(line.substr(at + 1));
    std::string value_text, timestamp, extra;
    rest >> value_text >> timestamp >> extra;
    const auto value = parse_value(value_text);
    if (!value) fail("bad value '" + value_text + "'");
    if (!extra.empty()) fail("text after the timestamp");
    const std::string type = out.types.count(family) != 0 ? out.types.at(family) : "";
    if (type == "counter" && value && !(*value >= 0)) fail("negative counter");
    const std::string key = series_key(name, labels);
    if (!out.samples.emplace(key, value.value_or(std::nan(""))).second) fail("series twice");
    out.labels[key] = labels;
  }

  // Histograms: per label set, buckets with increasing le, cumulative counts, +Inf last and
  // equal to _count, and a _sum.
  for (const auto& [family, type] : out.types) {
    if (type != "histogram") continue;
    std::map<label_map, std::vector<std::pair<double, double>>> buckets;
    for (auto [labels, value] : out.series(family + "_bucket")) {
      const auto le = labels.find("le");
      if (le == labels.end()) {
        out.errors.push_back(family + "_bucket without le");
        continue;
      }
      const auto bound = parse_value(le->second);
      if (!bound) out.errors.push_back(family + ": bad le '" + le->second + "'");
      labels.erase(le);
      buckets[labels].emplace_back(bound.value_or(0), value);
    }
    for (auto& [labels, list] : buckets) {
      std::sort(list.begin(), list.end());
      for (std::size_t i = 1; i < list.size(); ++i) {
        if (list[i].second < list[i - 1].second) {
          out.errors.push_back(family + ": bucket le=" + std::to_string(list[i].first) +
                               " is less than the one before: not cumulative");
        }
      }
      if (list.empty() || !std::isinf(list.back().first)) {
        out.errors.push_back(family + ": no +Inf bucket");
        continue;
      }
      const double count = out.value(family + "_count", labels);
      if (std::isnan(count) || count != list.back().second) {
        out.errors.push_back(family + ": +Inf bucket differs from _count");
      }
      if (std::isnan(out.value(family + "_sum", labels)))
        out.errors.push_back(family + ": no _sum");
    }
  }
  return out;
}

std::string errors_of(const exposition& parsed) {
  std::string text;
  for (const auto& error : parsed.errors) text += error + "\n";
  return text;
}

// ---------------------------------------------------------------------------------------------
// The parser must be able to fail: each broken text is refused for the reason it is broken.

void expect_refused(const std::string& text, const std::string& reason) {
  const exposition parsed = parse_exposition(text);
  const std::string errors = errors_of(parsed);
  EXPECT_NE(errors.find(reason), std::string::npos) << "text:\n" << text << "errors:\n" << errors;
}

TEST(ExpositionParser, RefusesWhatTheFormatForbids) {
  const std::string type = "# HELP x_total X.\n# TYPE x_total counter\n";
  EXPECT_TRUE(parse_exposition(type + "x_total{a=\"1\"} 3\n").errors.empty());
  expect_refused("x_total 1\n", "sample before its TYPE");
  expect_refused(type + "x_total{a=\"1\" 3\n", "malformed labels");
  expect_refused(type + "x_total{a=\"q\"q\"} 3\n", "malformed labels");
  expect_refused(type + "x_total{a=\"\\t\"} 3\n", "bad escape in a label value");
  expect_refused(type + "x_total{1a=\"1\"} 3\n", "bad label name");
  expect_refused(type + "x_total{__a=\"1\"} 3\n", "bad label name");
  expect_refused(type + "x-total 3\n", "bad metric name");
  expect_refused(type + "x_total three\n", "bad value");
  expect_refused(type + "x_total -1\n", "negative counter");
  expect_refused(type + "x_total 1\nx_total 2\n", "series twice");
  expect_refused(type + "x_total 1", "must end with a line feed");
  expect_refused(type + "\nx_total 1\n", "empty line");
  expect_refused(type + "# TYPE x_total gauge\n", "second TYPE");
  expect_refused(type + "# TYPE y gauge\ny 1\nx_total 1\n", "outside its family's group");
  const std::string histogram = "# HELP h H.\n# TYPE h histogram\n";
  expect_refused(histogram +
                     "h_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
                     "h_sum 1\nh_count 2\n",
                 "not cumulative");
  expect_refused(histogram + "h_bucket{le=\"1\"} 2\nh_sum 1\nh_count 2\n", "no +Inf bucket");
  expect_refused(histogram + "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
                 "+Inf bucket differs from _count");
  expect_refused(histogram + "h_bucket{le=\"+Inf\"} 2\nh_count 2\n", "no _sum");
}

// ---------------------------------------------------------------------------------------------
// Rendering.

elector_metrics sample_metrics(std::vector<metric_label> labels) {
  elector_metrics metrics;
  metrics.labels = std::move(labels);
  metrics.counters.s3_get.ok = 7;
  metrics.counters.s3_get.not_found = 1;
  metrics.counters.s3_put.ok = 5;
  metrics.counters.s3_put.precondition_failed = 2;
  metrics.counters.s3_put.failed = 3;
  metrics.counters.peer_check.ok = 11;
  metrics.counters.acquisitions = 1;
  metrics.counters.renewals = 4;
  metrics.counters.renewal_latency.observe(3ms);
  metrics.counters.renewal_latency.observe(7ms);
  metrics.counters.renewal_latency.observe(7ms);
  metrics.counters.renewal_latency.observe(40s);
  metrics.is_leader = true;
  metrics.term = 42;
  metrics.clock_offset = store_clock_offset{-300'012'345us, 4'500us};
  metrics.priority = -7;
  metrics.verified_candidates = 2;
  metrics.unverified_candidates = 5;
  return metrics;
}

TEST(PrometheusText, EverySeriesWithHelpTypeAndItsValue) {
  const std::string text = prometheus_text({sample_metrics({{"lock", "k"}, {"id", "a"}})});
  const exposition parsed = parse_exposition(text);
  ASSERT_TRUE(parsed.errors.empty()) << errors_of(parsed) << text;
  const std::map<std::string, std::string> expected_types{
      {"s3lect_s3_requests_total", "counter"},
      {"s3lect_peer_checks_total", "counter"},
      {"s3lect_acquisitions_total", "counter"},
      {"s3lect_renewals_total", "counter"},
      {"s3lect_losses_total", "counter"},
      {"s3lect_demotions_total", "counter"},
      {"s3lect_is_leader", "gauge"},
      {"s3lect_term", "gauge"},
      {"s3lect_consecutive_failures", "gauge"},
      {"s3lect_priority", "gauge"},
      {"s3lect_candidates", "gauge"},
      {"s3lect_clock_offset_seconds", "gauge"},
      {"s3lect_clock_offset_error_bound_seconds", "gauge"},
      {"s3lect_renewal_latency_seconds", "histogram"},
  };
  EXPECT_EQ(parsed.types, expected_types);
  for (const auto& [family, type] : expected_types) {
    EXPECT_FALSE(parsed.helps.at(family).empty()) << family;
  }
  const label_map base{{"lock", "k"}, {"id", "a"}};
  const auto with = [&](label_map extra) {
    extra.insert(base.begin(), base.end());
    return extra;
  };
  EXPECT_EQ(
      parsed.value("s3lect_s3_requests_total", with({{"operation", "get"}, {"outcome", "ok"}})), 7);
  EXPECT_EQ(parsed.value("s3lect_s3_requests_total",
                         with({{"operation", "get"}, {"outcome", "not_found"}})),
            1);
  EXPECT_EQ(parsed.value("s3lect_s3_requests_total",
                         with({{"operation", "put"}, {"outcome", "precondition_failed"}})),
            2);
  EXPECT_EQ(
      parsed.value("s3lect_s3_requests_total", with({{"operation", "put"}, {"outcome", "failed"}})),
      3);
  EXPECT_EQ(parsed.series("s3lect_s3_requests_total").size(), 8u);
  EXPECT_EQ(parsed.value("s3lect_peer_checks_total", with({{"outcome", "ok"}})), 11);
  EXPECT_EQ(parsed.series("s3lect_peer_checks_total").size(), 3u);
  EXPECT_EQ(parsed.value("s3lect_acquisitions_total", base), 1);
  EXPECT_EQ(parsed.value("s3lect_renewals_total", base), 4);
  EXPECT_EQ(parsed.value("s3lect_losses_total", base), 0);
  EXPECT_EQ(parsed.value("s3lect_is_leader", base), 1);
  EXPECT_EQ(parsed.value("s3lect_term", base), 42);
  EXPECT_EQ(parsed.value("s3lect_priority", base), -7) << "a signed gauge";
  EXPECT_EQ(parsed.value("s3lect_candidates", with({{"verified", "true"}})), 2);
  EXPECT_EQ(parsed.value("s3lect_candidates", with({{"verified", "false"}})), 5);
  EXPECT_DOUBLE_EQ(parsed.value("s3lect_clock_offset_seconds", base), -300.012345);
  EXPECT_DOUBLE_EQ(parsed.value("s3lect_clock_offset_error_bound_seconds", base), 0.0045);
  // Buckets in seconds: 3 ms ≤ 0.005, 7 ms twice ≤ 0.01, 40 s only in +Inf.
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_bucket", with({{"le", "0.005"}})), 1);
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_bucket", with({{"le", "0.01"}})), 3);
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_bucket", with({{"le", "2.5"}})), 3);
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_bucket", with({{"le", "30"}})), 3);
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_bucket", with({{"le", "+Inf"}})), 4);
  EXPECT_EQ(parsed.value("s3lect_renewal_latency_seconds_count", base), 4);
  EXPECT_DOUBLE_EQ(parsed.value("s3lect_renewal_latency_seconds_sum", base), 40.017);
  EXPECT_EQ(parsed.series("s3lect_renewal_latency_seconds_bucket").size(),
            latency_histogram::bounds_ms.size() + 1);
}

TEST(PrometheusText, EscapesLabelValues) {
  const std::string tricky = "a\"b\\c\nd é";
  const std::string text = prometheus_text({sample_metrics({{"lock", tricky}, {"id", "x"}})});
  EXPECT_NE(text.find("lock=\"a\\\"b\\\\c\\nd é\""), std::string::npos) << text;
  const exposition parsed = parse_exposition(text);
  ASSERT_TRUE(parsed.errors.empty()) << errors_of(parsed) << text;
  EXPECT_EQ(parsed.value("s3lect_term", {{"lock", tricky}, {"id", "x"}}), 42);
}

TEST(PrometheusText, SeveralElectorsShareEachFamilyGroup) {
  const std::string text = prometheus_text({sample_metrics({{"lock", "k1"}, {"id", "a"}}),
                                            sample_metrics({{"lock", "k2"}, {"id", "a"}})});
  const exposition parsed = parse_exposition(text);
  ASSERT_TRUE(parsed.errors.empty()) << errors_of(parsed) << text;
  EXPECT_EQ(parsed.series("s3lect_term").size(), 2u);
  EXPECT_EQ(parsed.series("s3lect_renewal_latency_seconds_count").size(), 2u);
}

TEST(PrometheusText, AnOffsetNotMeasuredYetHasNoSample) {
  elector_metrics metrics = sample_metrics({{"lock", "k"}, {"id", "a"}});
  metrics.clock_offset.reset();
  const exposition parsed = parse_exposition(prometheus_text({metrics}));
  ASSERT_TRUE(parsed.errors.empty()) << errors_of(parsed);
  EXPECT_TRUE(parsed.series("s3lect_clock_offset_seconds").empty());
  EXPECT_TRUE(parsed.series("s3lect_clock_offset_error_bound_seconds").empty());
}

TEST(PrometheusText, NoElectorsIsStillValid) {
  const exposition parsed = parse_exposition(prometheus_text(std::vector<elector_metrics>{}));
  EXPECT_TRUE(parsed.errors.empty()) << errors_of(parsed);
  EXPECT_TRUE(parsed.samples.empty());
}

// ---------------------------------------------------------------------------------------------
// Electors over the in-memory storage.

// The counts below are exact only if nothing but the test's own faults makes a request fail.
// Under TSan on a loaded CI machine the io thread stalls for tens of milliseconds, so a 50 ms
// request timeout once demoted the first leader before the test looked: the timeouts leave
// room for stalls, and only the deliberate demotion waits for the renew deadline (2 s).
elector_config fast_config(std::string id) {
  elector_config config;
  config.lock_key = "group/leader.json";
  config.server_id = std::move(id);
  config.server_address = "127.0.0.1:1";
  config.lease = 3000ms;
  config.renew_deadline = 2000ms;
  config.frequent_interval = 150ms;
  config.infrequent_interval = 450ms;
  config.request_timeout = 500ms;
  config.retry.delays = {5ms, 20ms};
  return config;
}

struct pair_of_electors : s3lect::test::elector_group {
  pair_of_electors()
      : elector_group(2, [](int i) { return fast_config(i == 0 ? "node-a" : "node-b"); }) {}

  memory_storage& view_a = *views[0];
  memory_storage& view_b = *views[1];
  elector& a = *electors[0];
  elector& b = *electors[1];
};

/// The series of one elector of the registry's text.
struct elector_view {
  const exposition& parsed;
  label_map labels;
  double operator()(const std::string& name, label_map extra = {}) const {
    extra.insert(labels.begin(), labels.end());
    return parsed.value(name, extra);
  }
};

exposition render_and_parse(const metrics_registry& registry) {
  const std::string text = registry.render();
  exposition parsed = parse_exposition(text);
  EXPECT_TRUE(parsed.errors.empty()) << errors_of(parsed) << text;
  return parsed;
}

TEST(MetricsOfElectors, FollowAcquisitionRenewalsHandoverAndDemotion) {
  pair_of_electors group;
  metrics_registry registry;
  registry.add(group.a, {{"bucket", "b"}});
  registry.add(group.b, {{"bucket", "b"}});
  const label_map a_labels{{"lock", "group/leader.json"}, {"id", "node-a"}, {"bucket", "b"}};
  const label_map b_labels{{"lock", "group/leader.json"}, {"id", "node-b"}, {"bucket", "b"}};

  {
    const exposition parsed = render_and_parse(registry);
    const elector_view a{parsed, a_labels};
    EXPECT_EQ(a("s3lect_is_leader"), 0);
    EXPECT_EQ(a("s3lect_acquisitions_total"), 0);
    EXPECT_EQ(a("s3lect_s3_requests_total", {{"operation", "get"}, {"outcome", "not_found"}}), 0);
    EXPECT_EQ(a("s3lect_renewal_latency_seconds_count"), 0);
  }

  group.a.start();
  ASSERT_TRUE(group.run_until([&] { return group.a.is_leader(); }));
  group.b.start();
  ASSERT_TRUE(group.run_until(
      [&] { return group.b.leader_id() == "node-a" && group.a.counters().renewals >= 2; }));
  const std::uint64_t first_term = group.a.status().term;
  {
    const exposition parsed = render_and_parse(registry);
    const elector_view a{parsed, a_labels};
    const elector_view b{parsed, b_labels};
    const elector_counters counters = group.a.counters();
    EXPECT_EQ(a("s3lect_is_leader"), 1);
    EXPECT_EQ(b("s3lect_is_leader"), 0);
    EXPECT_EQ(a("s3lect_acquisitions_total"), 1);
    EXPECT_EQ(b("s3lect_acquisitions_total"), 0);
    EXPECT_GE(first_term, 1u);
    EXPECT_EQ(a("s3lect_term"), static_cast<double>(first_term));
    EXPECT_EQ(b("s3lect_term"), static_cast<double>(first_term));
    EXPECT_EQ(a("s3lect_renewals_total"), static_cast<double>(counters.renewals));
    EXPECT_GE(a("s3lect_renewals_total"), 2);
    EXPECT_EQ(a("s3lect_renewal_latency_seconds_count"), a("s3lect_renewals_total"));
    EXPECT_EQ(a("s3lect_renewal_latency_seconds_bucket", {{"le", "+Inf"}}),
              a("s3lect_renewals_total"));
    // Every renewal was a PUT that succeeded; the acquisition one more PUT (counted as failed
    // if a stalled machine let it outlive request_timeout and a re-read found it won).
    const double put_ok = a("s3lect_s3_requests_total", {{"operation", "put"}, {"outcome", "ok"}});
    EXPECT_GE(put_ok, a("s3lect_renewals_total"));
    EXPECT_GE(put_ok + a("s3lect_s3_requests_total", {{"operation", "put"}, {"outcome", "failed"}}),
              1 + a("s3lect_renewals_total"));
    // The first read found no record.
    EXPECT_EQ(a("s3lect_s3_requests_total", {{"operation", "get"}, {"outcome", "not_found"}}), 1);
    EXPECT_GE(b("s3lect_s3_requests_total", {{"operation", "get"}, {"outcome", "ok"}}), 1);
    EXPECT_EQ(a("s3lect_losses_total"), 0);
  }

  // Handover: a stops (releasing), b takes over with the next term.
  bool stopped = false;
  group.a.async_stop([&stopped](boost::system::error_code) { stopped = true; });
  ASSERT_TRUE(group.run_until([&] { return stopped && group.b.is_leader(); }));
  {
    const exposition parsed = render_and_parse(registry);
    const elector_view a{parsed, a_labels};
    const elector_view b{parsed, b_labels};
    EXPECT_EQ(a("s3lect_is_leader"), 0);
    EXPECT_EQ(a("s3lect_losses_total"), 1);
    EXPECT_EQ(a("s3lect_demotions_total"), 0);
    EXPECT_EQ(b("s3lect_is_leader"), 1);
    EXPECT_EQ(b("s3lect_acquisitions_total"), 1);
    EXPECT_EQ(b("s3lect_term"), static_cast<double>(first_term + 1));
  }

  // Demotion: b is cut off from the store and steps down at its renew deadline.
  memory_faults partition;
  partition.partitioned = true;
  group.view_b.set_faults(partition);
  // Wait for the demotion's accounting, not for is_leader(): is_leader() turns false on the
  // clock at the renew deadline, before the elector's strand runs the demotion and counts it.
  // A renewal still in flight may outlive the deadline, so wait for the failed attempt too (a
  // loaded machine delays it past the deadline).
  ASSERT_TRUE(group.run_until([&] {
    const elector_counters counters = group.b.counters();
    return counters.demotions >= 1 && counters.s3_put.failed >= 1;
  }));
  EXPECT_FALSE(group.b.is_leader());
  {
    const exposition parsed = render_and_parse(registry);
    const elector_view b{parsed, b_labels};
    EXPECT_EQ(b("s3lect_is_leader"), 0);
    EXPECT_EQ(b("s3lect_losses_total"), 1);
    EXPECT_EQ(b("s3lect_demotions_total"), 1);
    EXPECT_GE(b("s3lect_s3_requests_total", {{"operation", "put"}, {"outcome", "failed"}}), 1);
  }
  group.view_b.set_faults({});
  bool b_stopped = false;
  group.b.async_stop([&b_stopped](boost::system::error_code) { b_stopped = true; });
  ASSERT_TRUE(group.run_until([&] { return b_stopped; }));
}

TEST(MetricsOfElectors, OneElectorOnItsOwnAndTheRegistrysRules) {
  pair_of_electors group;
  const exposition parsed = parse_exposition(prometheus_text(group.a));
  ASSERT_TRUE(parsed.errors.empty()) << errors_of(parsed);
  EXPECT_EQ(parsed.value("s3lect_is_leader", {{"lock", "group/leader.json"}, {"id", "node-a"}}), 0);

  metrics_registry registry;
  registry.add(group.a);
  EXPECT_THROW(registry.add(group.a), boost::system::system_error);
  EXPECT_THROW(registry.add(group.b, {{"le", "x"}}), boost::system::system_error);
  EXPECT_THROW(registry.add(group.b, {{"bad-name", "x"}}), boost::system::system_error);
  EXPECT_THROW(registry.add(group.b, {{"__x", "x"}}), boost::system::system_error);
  EXPECT_THROW(registry.add(group.b, {{"zone", "a"}, {"zone", "b"}}), boost::system::system_error);
  EXPECT_THROW(registry.add(group.b, {{"zone", "\xff"}}), boost::system::system_error);
  EXPECT_THROW(collect_metrics(group.b, {{"id", "again"}}), boost::system::system_error);
  registry.add(group.b, {{"zone", "a"}});
  EXPECT_EQ(parse_exposition(registry.render()).series("s3lect_term").size(), 2u);
  registry.remove(group.a);
  EXPECT_EQ(parse_exposition(registry.render()).series("s3lect_term").size(), 1u);
}

TEST(MetricsOfElectors, RegistryRefusesTwoElectorsWithTheSameLabels) {
  asio::io_context io;
  auto store = std::make_shared<memory_store>();
  memory_storage view(io.get_executor(), store);
  elector first(io.get_executor(), view, fast_config("same"));
  elector second(io.get_executor(), view, fast_config("same"));
  metrics_registry registry;
  registry.add(first);
  EXPECT_THROW(registry.add(second), boost::system::system_error);
  registry.add(second, {{"instance", "2"}});
}

// ---------------------------------------------------------------------------------------------
// Serving: plain HTTP from metrics_server, HTTPS from health_server. The servers run on a
// thread of their own; the test is a blocking client with a receive timeout.

struct http_reply {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< Lower-case names.
  std::string body;
};

/// A header's value, empty when absent.
std::string header(const http_reply& reply, const std::string& lower_case_name) {
  const auto found = reply.headers.find(lower_case_name);
  return found == reply.headers.end() ? std::string() : found->second;
}

/// Splits a raw HTTP/1.1 response read to the end of the connection.
http_reply parse_reply(const std::string& raw) {
  http_reply reply;
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return reply;
  std::istringstream head(raw.substr(0, end));
  std::string line;
  std::getline(head, line);
  std::istringstream status_line(line);
  std::string version;
  status_line >> version >> reply.status;
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    reply.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  reply.body = raw.substr(end + 4);
  return reply;
}

void set_receive_timeout(tcp::socket& socket) {
  timeval timeout{10, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
}

/// One request on a fresh connection, `Connection: close`, read to the end.
http_reply plain_request(tcp::endpoint endpoint, const std::string& method,
                         const std::string& target) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(endpoint);
  set_receive_timeout(socket);
  const std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string raw;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(raw), ec);
  EXPECT_EQ(ec, asio::error::eof) << ec.message();
  return parse_reply(raw);
}

using test::background_io;

template <class Server>
void stop_server(Server& server) {
  auto stopped = server.async_stop(asio::use_future);
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
}

TEST(MetricsServer, ServesTheTextAtItsPathOnly) {
  background_io runner;
  std::atomic<int> renders{0};
  metrics_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.render = [&renders] {
    ++renders;
    return prometheus_text({sample_metrics({{"lock", "k"}, {"id", "a"}})});
  };
  metrics_server server(runner.io.get_executor(), config);
  ASSERT_FALSE(server.start());
  const tcp::endpoint endpoint = server.local_endpoint();
  ASSERT_NE(endpoint.port(), 0);

  const http_reply reply = plain_request(endpoint, "GET", "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(header(reply, "content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(header(reply, "content-length"), std::to_string(reply.body.size()));
  const exposition parsed = parse_exposition(reply.body);
  EXPECT_TRUE(parsed.errors.empty()) << errors_of(parsed);
  EXPECT_EQ(parsed.value("s3lect_term", {{"lock", "k"}, {"id", "a"}}), 42);
  EXPECT_EQ(renders.load(), 1);

  const http_reply head = plain_request(endpoint, "HEAD", "/metrics");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(header(head, "content-length"), std::to_string(reply.body.size()));
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(plain_request(endpoint, "GET", "/metrics?x=1").status, 200);
  EXPECT_EQ(plain_request(endpoint, "GET", "/other").status, 404);
  const http_reply post = plain_request(endpoint, "POST", "/metrics");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(header(post, "allow"), "GET, HEAD");

  // A header larger than the limit is answered 431.
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(endpoint);
  set_receive_timeout(socket);
  const std::string big = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                          std::string(config.max_header_bytes + 10, 'a') + "\r\n\r\n";
  boost::system::error_code ignored;
  asio::write(socket, asio::buffer(big), ignored);
  std::string raw;
  asio::read(socket, asio::dynamic_buffer(raw), ignored);
  EXPECT_EQ(parse_reply(raw).status, 431) << raw;

  stop_server(server);
  boost::system::error_code refused;
  tcp::socket late(io);
  late.connect(endpoint, refused);
  EXPECT_TRUE(refused) << "still listening after the stop";
}

TEST(MetricsServer, ReportsBindErrorsAndBadSettings) {
  background_io runner;
  metrics_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.render = [] { return std::string(); };
  metrics_server first(runner.io.get_executor(), config);
  ASSERT_FALSE(first.start());
  EXPECT_EQ(first.start(), asio::error::already_started);
  config.bind_address = "127.0.0.1:" + std::to_string(first.local_endpoint().port());
  metrics_server second(runner.io.get_executor(), config);
  EXPECT_EQ(second.start(), asio::error::address_in_use);

  metrics_server_config bad = config;
  bad.bind_address = "localhost:9100";
  EXPECT_NE(bad.validate().value_or("").find("bind_address"), std::string::npos);
  bad = config;
  bad.render = nullptr;
  EXPECT_NE(bad.validate().value_or("").find("render"), std::string::npos);
  bad = config;
  bad.path = "metrics";
  EXPECT_NE(bad.validate().value_or("").find("path"), std::string::npos);
  bad = config;
  bad.max_connections = 0;
  EXPECT_THROW(metrics_server(runner.io.get_executor(), bad), boost::system::system_error);
  stop_server(first);
}

TEST(MetricsServer, AnswersFiveHundredWhenRenderingFails) {
  background_io runner;
  metrics_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.render = []() -> std::string { throw std::runtime_error("broken"); };
  metrics_server server(runner.io.get_executor(), config);
  ASSERT_FALSE(server.start());
  EXPECT_EQ(plain_request(server.local_endpoint(), "GET", "/metrics").status, 500);
  stop_server(server);
}

/// One request over TLS, verifying the server against the test CA; read to the end.
http_reply tls_request(tcp::endpoint endpoint, const std::string& ca_pem,
                       const std::string& target) {
  asio::io_context io;
  ssl::context context(ssl::context::tls_client);
  context.add_certificate_authority(asio::buffer(ca_pem));
  context.set_verify_mode(ssl::verify_peer);
  ssl::stream<tcp::socket> stream(io, context);
  stream.next_layer().connect(endpoint);
  set_receive_timeout(stream.next_layer());
  stream.handshake(ssl::stream_base::client);
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  asio::write(stream, asio::buffer(request));
  std::string raw;
  boost::system::error_code ec;
  asio::read(stream, asio::dynamic_buffer(raw), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == ssl::error::stream_truncated) << ec.message();
  return parse_reply(raw);
}

TEST(HealthServerMetrics, ServesMetricsBesideTheHealthEndpointWhenSet) {
  background_io runner;
  const test::test_pki pki = test::make_test_pki();
  test::fake_leadership_source source(runner.io.get_executor());
  health_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.tls.certificate_pem = pki.server.certificate;
  config.tls.private_key_pem = pki.server.private_key;

  {
    health_server without(runner.io.get_executor(), source, config);
    ASSERT_FALSE(without.start());
    EXPECT_EQ(tls_request(without.local_endpoint(), pki.ca.certificate, "/metrics").status, 404);
    stop_server(without);
  }

  config.metrics = [] { return prometheus_text({sample_metrics({{"lock", "k"}, {"id", "a"}})}); };
  health_server with(runner.io.get_executor(), source, config);
  ASSERT_FALSE(with.start());
  const http_reply reply = tls_request(with.local_endpoint(), pki.ca.certificate, "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(header(reply, "content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const exposition parsed = parse_exposition(reply.body);
  EXPECT_TRUE(parsed.errors.empty()) << errors_of(parsed);
  EXPECT_EQ(parsed.value("s3lect_is_leader", {{"lock", "k"}, {"id", "a"}}), 1);
  // The health endpoint still answers beside it.
  const http_reply health =
      tls_request(with.local_endpoint(), pki.ca.certificate, "/health/leadership");
  EXPECT_TRUE(health.status == 200 || health.status == 404) << health.status;
  EXPECT_EQ(header(health, "content-type"), "application/json");
  stop_server(with);

  health_server_config clash = config;
  clash.handler.path = "/metrics";
  EXPECT_NE(clash.validate().value_or("").find("metrics"), std::string::npos);
}

TEST(MetricsOfElectors, PriorityIsTheConfiguredOne) {
  asio::io_context io;
  auto store = std::make_shared<memory_store>();
  memory_storage view(io.get_executor(), store);
  elector_config config = fast_config("ranked");
  config.coordination.priority = -12;
  elector ranked(io.get_executor(), view, config);
  EXPECT_EQ(collect_metrics(ranked).priority, -12);
  const exposition parsed = parse_exposition(prometheus_text(ranked));
  EXPECT_EQ(parsed.value("s3lect_priority", {{"lock", config.lock_key}, {"id", config.server_id}}),
            -12);
}

}  // namespace
}  // namespace s3lect
