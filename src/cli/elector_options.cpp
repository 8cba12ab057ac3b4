#include "cli/elector_options.hpp"

#include <s3lect/record.hpp>

#include <unistd.h>

#include <charconv>
#include <climits>

namespace s3lect::cli {
namespace {

using std::chrono::milliseconds;

std::string duration_error(const std::string& option, const std::string& value) {
  return "--" + option + ": expected a duration such as 500ms, 15s or 1m, got '" + value + "'";
}

/// Reads an optional duration option into `target`; false (with `error`) when malformed.
bool read_duration(const parsed_args& args, const std::string& option, milliseconds& target,
                   std::string& error) {
  const auto value = args.get(option);
  if (!value) return true;
  const auto parsed = parse_duration(*value);
  if (!parsed) {
    error = duration_error(option, *value);
    return false;
  }
  target = *parsed;
  return true;
}

/// Checks HOST:PORT with a port of 1-65535 (IPv6 hosts in brackets: [::1]:8443).
bool is_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  const std::string_view host = text.substr(0, colon);
  if (host.find(':') != std::string_view::npos && (host.front() != '[' || host.back() != ']')) {
    return false;
  }
  unsigned port = 0;
  const std::string_view digits = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  return ec == std::errc{} && end == digits.data() + digits.size() && port >= 1 && port <= 65535;
}

bool read_retry_delays(const parsed_args& args, retry_policy& retry, std::string& error) {
  const auto value = args.get("retry-delays");
  if (!value) return true;
  retry.delays.clear();
  if (*value == "none") return true;
  std::string_view rest = *value;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto delay = parse_duration(item);
    if (!delay) {
      error =
          "--retry-delays: expected a comma-separated list of durations such as "
          "100ms,1s (or none), got '" +
          *value + "'";
      return false;
    }
    retry.delays.push_back(*delay);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

const std::vector<std::string>& elector_flag_names() {
  static const std::vector<std::string> names{};
  return names;
}

const std::vector<std::string>& elector_valued_names() {
  static const std::vector<std::string> names{
      "id",           "addr",       "lease",          "renew-deadline",
      "frequent",     "infrequent", "max-clock-skew", "acquire-grace",
      "retry-delays", "log-level",  "log-format"};
  return names;
}

const char* elector_options_help() {
  return "  --id ID                  this node's identity, written as the record's leaderID\n"
         "                           (default: HOSTNAME:PID)\n"
         "  --addr HOST:PORT         this node's address, written as the record's leaderAddr:\n"
         "                           where followers reach its health endpoint in peer mode\n"
         "                           (default: empty; with --peer, the --peer-listen address)\n"
         "  --lease DUR              how long a record stays valid without renewal (default 15s).\n"
         "                           The timing options not given follow it in the default\n"
         "                           proportions: renew deadline 2/3 of the lease, frequent 1/2\n"
         "                           of the renew deadline, infrequent 6 x frequent, request\n"
         "                           timeout 1/5 and retry delays 1/50 and 1/5 of renew\n"
         "                           deadline - frequent, kill grace 3/5 of lease - renew\n"
         "                           deadline, peer timeout 1/5 of the lease; --print-config\n"
         "                           shows the result\n"
         "  --renew-deadline DUR     a leader that could not renew for this long steps down\n"
         "                           (default 10s; must be less than --lease)\n"
         "  --frequent DUR           leaders renew, and unsettled followers read, this often\n"
         "                           (default 5s; must be less than --renew-deadline)\n"
         "  --infrequent DUR         settled followers read this often (default 30s)\n"
         "  --max-clock-skew DUR|off how far the store's clocks may disagree: a follower takes\n"
         "                           over once the store's Date - Last-Modified - 2s - skew\n"
         "                           exceeds the lease (no node's wall clock is used); off\n"
         "                           trusts only the follower's own elapsed time (default 2s)\n"
         "  --acquire-grace DUR      after taking over an expired record, wait this long before\n"
         "                           acting as leader (default 0)\n"
         "  --request-timeout DUR    bound on one request attempt (default 1s)\n"
         "  --retry-delays LIST      delays before retrying a failed request, e.g. 100ms,1s, or\n"
         "                           none (default 100ms,1s). All attempts and delays must fit in\n"
         "                           renew-deadline - frequent: 3 x 1s + 1.1s = 4.1s <= 5s.\n"
         "  --log-level LEVEL        trace, debug, info, warning or error (default info)\n"
         "  --log-format FORMAT      text (key=value) or json, one line per event on stderr\n"
         "                           (default text)\n";
}

std::string default_server_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof host, "localhost");
  }
  return std::string(host) + ":" + std::to_string(::getpid());
}

std::string option_for_field(std::string_view field) {
  static const std::pair<std::string_view, std::string_view> options[] = {
      {"lock_key", "--lock"},
      {"server_id", "--id"},
      {"server_address", "--addr"},
      {"lease", "--lease"},
      {"renew_deadline", "--renew-deadline"},
      {"frequent_interval", "--frequent"},
      {"infrequent_interval", "--infrequent"},
      {"max_clock_skew", "--max-clock-skew"},
      {"acquire_grace", "--acquire-grace"},
      {"request_timeout", "--request-timeout"},
      {"retry", "--retry-delays, --request-timeout"},
      {"peer.timeout", "--peer-timeout"},
      {"peer.tls.ca_file", "--peer-ca"},
      {"peer.tls.certificate_file", "--peer-client-cert"},
      {"peer.tls.private_key_file", "--peer-client-key"},
      {"peer.tls.private_key", "--peer-client-key"},
  };
  // The field path, then its parents: "retry.delays[1]" is set by the options of "retry".
  for (;;) {
    for (const auto& [name, option] : options) {
      if (name == field) return std::string(option);
    }
    const auto parent_end = field.find_last_of(".[");
    if (parent_end == std::string_view::npos) return {};
    field = field.substr(0, parent_end);
  }
}

namespace {

/// --id and --addr.
bool read_identity(const parsed_args& args, elector_config& config, std::string& error) {
  config.server_id = args.get("id").value_or(default_server_id());
  if (auto addr = args.get("addr")) {
    if (!is_host_port(*addr)) {
      error = "--addr: expected HOST:PORT with a port of 1-65535, got '" + *addr + "'";
      return false;
    }
    config.server_address = *addr;
  }
  return true;
}

/// Sets each timing option not given from those it depends on, in the default proportions:
/// the renew deadline and the peer timeout from the lease (elector_config::for_lease), the
/// frequent interval from the renew deadline (1/2), the infrequent from the frequent (6x), and
/// the request timeout and retry delays from the renewal's budget D - F (1/5; 1/50 and 1/5).
/// With only --lease given, that is for_lease's configuration. Each one set is noted in
/// `derived`. Nothing is derived when no timing option is given (the defaults are the
/// library's) or a given one is out of range (validate() names it).
void derive_timing(const parsed_args& args, elector_config& config,
                   std::vector<std::string>& derived) {
  const bool lease_given = args.has("lease");
  const bool deadline_given = args.has("renew-deadline");
  const bool frequent_given = args.has("frequent");
  if (!lease_given && !deadline_given && !frequent_given) return;
  for (const milliseconds value : {config.lease, config.renew_deadline, config.frequent_interval}) {
    if (value <= milliseconds::zero() || value > max_record_lease) return;
  }
  const elector_config scaled = elector_config::for_lease(config.lease);
  const auto derive = [&args, &derived](const char* option, auto& field, auto value) {
    if (args.has(option)) return;
    field = value;
    derived.push_back(option);
  };
  derive("renew-deadline", config.renew_deadline, scaled.renew_deadline);
  derive("frequent", config.frequent_interval,
         deadline_given ? config.renew_deadline / 2 : scaled.frequent_interval);
  derive(
      "infrequent", config.infrequent_interval,
      deadline_given || frequent_given ? config.frequent_interval * 6 : scaled.infrequent_interval);
  const milliseconds budget = config.renew_deadline - config.frequent_interval;
  const bool budget_given = (deadline_given || frequent_given) && budget > milliseconds::zero();
  derive("request-timeout", config.request_timeout,
         budget_given ? budget / 5 : scaled.request_timeout);
  derive("retry-delays", config.retry.delays,
         budget_given ? std::vector<milliseconds>{budget / 50, budget / 5} : scaled.retry.delays);
  derive("peer-timeout", config.peer.timeout, scaled.peer.timeout);
}

/// The durations, --max-clock-skew, --request-timeout and --retry-delays; the timing options
/// not given follow those given (derive_timing).
bool read_timing(const parsed_args& args, store_target& target, elector_config& config,
                 std::vector<std::string>& derived, std::string& error) {
  if (!read_duration(args, "lease", config.lease, error) ||
      !read_duration(args, "renew-deadline", config.renew_deadline, error) ||
      !read_duration(args, "frequent", config.frequent_interval, error) ||
      !read_duration(args, "infrequent", config.infrequent_interval, error) ||
      !read_duration(args, "acquire-grace", config.acquire_grace, error)) {
    return false;
  }
  if (auto skew = args.get("max-clock-skew")) {
    if (*skew == "off") {
      config.max_clock_skew.reset();
    } else if (auto parsed = parse_duration(*skew)) {
      config.max_clock_skew = *parsed;
    } else {
      error = "--max-clock-skew: expected a duration such as 2s, or off, got '" + *skew + "'";
      return false;
    }
  }
  // make_store_target already checked --request-timeout; the elector's default (or the one
  // derived from --lease) is shorter than the client's, because the whole retry schedule must
  // fit before the renew deadline.
  if (args.has("request-timeout")) config.request_timeout = target.config.request_timeout;
  if (!read_retry_delays(args, config.retry, error)) return false;
  derive_timing(args, config, derived);
  target.config.request_timeout = config.request_timeout;
  return true;
}

/// --log-level and --log-format.
bool read_log_settings(const parsed_args& args, elector_settings& settings, std::string& error) {
  if (auto level = args.get("log-level")) {
    auto parsed = parse_log_level(*level);
    if (!parsed) {
      error = "--log-level: expected trace, debug, info, warning or error, got '" + *level + "'";
      return false;
    }
    settings.level = *parsed;
  }
  if (auto format = args.get("log-format")) {
    auto parsed = parse_log_format(*format);
    if (!parsed) {
      error = "--log-format: expected text or json, got '" + *format + "'";
      return false;
    }
    settings.format = *parsed;
  }
  return true;
}

/// The library's message names the config field; say which option sets it.
std::string invalid_configuration(const std::string& problem) {
  std::string_view field = problem;
  field = field.substr(0, field.find(':'));
  const std::string option = option_for_field(field);
  return option.empty() ? "invalid configuration: " + problem
                        : "invalid configuration (" + option + "): " + problem;
}

}  // namespace

std::optional<elector_settings> make_elector_settings(const parsed_args& args, store_target& target,
                                                      std::string& error) {
  elector_settings settings;
  elector_config& config = settings.config;
  config.lock_key = target.key;
  if (!read_identity(args, config, error) ||
      !read_timing(args, target, config, settings.derived, error) ||
      !read_log_settings(args, settings, error)) {
    return std::nullopt;
  }
  auto serve = make_serve_settings(args, config, error);
  if (!serve) return std::nullopt;
  settings.serve = std::move(*serve);
  if (auto problem = config.validate()) {
    error = invalid_configuration(*problem);
    return std::nullopt;
  }
  return settings;
}

}  // namespace s3lect::cli
