#include "cli/elector_options.hpp"

#include <s3lect/record.hpp>

#include <unistd.h>

#include <charconv>
#include <climits>

namespace s3lect::cli {
namespace {

using std::chrono::milliseconds;

/// The shortest --lease: it derives a 66ms request timeout and retries after 6ms and 66ms,
/// about the least a store on the same network answers within (docs/configuration.md).
constexpr milliseconds min_cli_lease{std::chrono::seconds{1}};

/// Reads an optional duration option, at most a lease's 24 h, into `target`; false (with
/// `error`) when malformed or too long.
bool read_duration(const parsed_args& args, const std::string& option,
                   std::optional<milliseconds>& target, std::string& error) {
  const auto value = args.get(option);
  if (!value) return true;
  target = parse_duration_at_most("--" + option, *value, max_record_lease, error);
  return target.has_value();
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

bool read_retry_delays(const parsed_args& args,
                       std::optional<std::vector<milliseconds>>& retry_delays, std::string& error) {
  const auto value = args.get("retry-delays");
  if (!value) return true;
  std::vector<milliseconds>& delays = retry_delays.emplace();
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
    delays.push_back(*delay);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

const std::vector<std::string>& elector_flag_names() {
  static const std::vector<std::string> names{"no-preempt"};
  return names;
}

const std::vector<std::string>& elector_valued_names() {
  static const std::vector<std::string> names{
      "id",         "addr",           "lease",          "renew-deadline",  "frequent",
      "infrequent", "follower-reads", "max-clock-skew", "acquire-grace",   "retry-delays",
      "log-level",  "log-format",     "priority",       "handover-window", "rank-step",
      "settle"};
  return names;
}

const char* elector_options_help() {
  return "  --id ID                  this node's identity, written as the record's leaderID\n"
         "                           (default: HOSTNAME:PID)\n"
         "  --addr HOST:PORT         this node's address, written as the record's leaderAddr:\n"
         "                           where followers reach its health endpoint in peer mode\n"
         "                           (default: empty; with --peer, the --peer-listen address)\n"
         "  --lease DUR              how long a record stays valid without renewal (default 15s,\n"
         "                           at least 1s, at most 24h; every duration is at most 24h).\n"
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
         "  --infrequent DUR         settled followers check the leader this often in peer\n"
         "                           mode, or read in S3 mode with --follower-reads economy\n"
         "                           (default 30s)\n"
         "  --follower-reads MODE    S3 mode: first-hand (default) reads every --frequent / 2,\n"
         "                           so a follower sees every renewal and takes over within\n"
         "                           about the lease of a crash, within --frequent / 2 of a\n"
         "                           release; economy reads every --frequent, then every\n"
         "                           --infrequent once settled: a twelfth of the GETs, and a\n"
         "                           crash or release noticed up to --infrequent late\n"
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
         "  --priority N             higher is preferred to lead, from -1000000 to 1000000\n"
         "                           (default 0). Written into this node's records; in peer\n"
         "                           mode with --peer-watch its leader names the best watching\n"
         "                           candidate as successor when it hands over\n"
         "  --handover-window DUR    when a released record names a successor (or keeps the\n"
         "                           released holder out), how long the others hold off before\n"
         "                           competing (default --frequent / 5 within 100ms .. lease /\n"
         "                           2: 1s; at most the lease)\n"
         "  --rank-step DUR          crash failover: each rank below the best in the dead\n"
         "                           leader's candidate list delays a takeover this much, at\n"
         "                           most 3 ranks (default with --peer-watch 250ms, less for\n"
         "                           short leases; else 0; 3 x it at most lease - renew deadline)\n"
         "  --settle DUR             preemption: a leader hands over to a watching candidate of\n"
         "                           higher --priority once it has watched, and the leader has\n"
         "                           led, this long without a break: the command is stopped,\n"
         "                           then the lock released naming it (default the lease; at\n"
         "                           least --frequent)\n"
         "  --no-preempt             never hand over to a higher priority: priorities then only\n"
         "                           order handovers and crash failovers (default: preempt)\n"
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
      {"coordination.priority", "--priority"},
      {"coordination.handover_window", "--handover-window"},
      {"coordination.rank_step", "--rank-step"},
      {"coordination.settle", "--settle"},
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

/// The timing options not given that follow those given (elector_config::apply_timing), for
/// --print-config: none when no option they follow is given.
std::vector<std::string> derived_timing_options(const parsed_args& args) {
  if (!args.has("lease") && !args.has("renew-deadline") && !args.has("frequent")) return {};
  std::vector<std::string> derived;
  for (const char* option :
       {"renew-deadline", "frequent", "infrequent", "request-timeout", "retry-delays",
        "peer-timeout", "handover-window", "rank-step", "settle"}) {
    if (!args.has(option)) derived.push_back(option);
  }
  return derived;
}

/// The timing options as given into `timing` (--request-timeout as make_store_target read it),
/// --acquire-grace, --follower-reads and --max-clock-skew into `config`.
bool read_timing(const parsed_args& args, const store_target& target, elector_timing& timing,
                 elector_config& config, std::string& error) {
  std::optional<milliseconds> grace;
  if (!read_duration(args, "lease", timing.lease, error) ||
      !read_duration(args, "renew-deadline", timing.renew_deadline, error) ||
      !read_duration(args, "frequent", timing.frequent_interval, error) ||
      !read_duration(args, "infrequent", timing.infrequent_interval, error) ||
      !read_duration(args, "acquire-grace", grace, error)) {
    return false;
  }
  if (grace) config.acquire_grace = *grace;
  if (auto reads = args.get("follower-reads")) {
    if (*reads == "first-hand") {
      config.s3_follower_reads = follower_reads::first_hand;
    } else if (*reads == "economy") {
      config.s3_follower_reads = follower_reads::economy;
    } else {
      error = "--follower-reads: expected first-hand or economy, got '" + *reads + "'";
      return false;
    }
  }
  if (timing.lease && *timing.lease < min_cli_lease) {
    error = "--lease: must be at least " + format_duration(min_cli_lease) +
            " (a shorter lease leaves too little time for the requests it derives), got '" +
            *args.get("lease") + "'";
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
  if (args.has("request-timeout")) timing.request_timeout = target.request_timeout();
  return read_retry_delays(args, timing.retry_delays, error);
}

/// --priority, --handover-window, --rank-step, --settle and --no-preempt; their ranges are the
/// library's (validate()). `run` takes the library's advice on preemption rather than letting
/// it hand over by itself: its command must stop before the release (command_supervisor.cpp).
bool read_coordination(const parsed_args& args, coordination_config& coordination,
                       std::string& error) {
  if (auto priority = args.get("priority")) {
    const char* end = priority->data() + priority->size();
    const auto [parsed_end, ec] = std::from_chars(priority->data(), end, coordination.priority);
    if (ec != std::errc{} || parsed_end != end) {
      error = "--priority: expected an integer from -1000000 to 1000000 such as 10, got '" +
              *priority + "'";
      return false;
    }
  }
  coordination.preempt = args.has("no-preempt") ? preemption::off : preemption::advise;
  return read_duration(args, "handover-window", coordination.handover_window, error) &&
         read_duration(args, "rank-step", coordination.rank_step, error) &&
         read_duration(args, "settle", coordination.settle, error);
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

/// The library's message names the config field; say which option sets it. When the user did
/// not give that option (it is a default, or follows --lease), blame the timing options given
/// that the message names instead: `--frequent 20s` alone breaks the default renew deadline.
std::string invalid_configuration(const parsed_args& args, const std::string& problem) {
  std::string_view field = problem;
  field = field.substr(0, field.find(':'));
  std::string option = option_for_field(field);
  if (!option.empty() && !args.has(option.substr(2, option.find(',') - 2))) {
    std::string given;
    for (const char* name : {"lease", "renew_deadline", "frequent_interval", "request_timeout"}) {
      const std::string other = option_for_field(name);
      if (name != field && problem.find(name) != std::string::npos && args.has(other.substr(2))) {
        given += (given.empty() ? "" : ", ") + other;
      }
    }
    if (!given.empty()) {
      option = given + "; " + option + " not given, so it " +
               (args.has("lease") ? "follows --lease" : "is the default");
    }
  }
  return option.empty() ? "invalid configuration: " + problem
                        : "invalid configuration (" + option + "): " + problem;
}

}  // namespace

std::optional<elector_settings> make_elector_settings(const parsed_args& args, store_target& target,
                                                      std::string& error) {
  elector_settings settings;
  elector_config& config = settings.config;
  config.lock_key = target.key;
  elector_timing timing;
  if (!read_identity(args, config, error) || !read_timing(args, target, timing, config, error) ||
      !read_coordination(args, config.coordination, error) ||
      !read_log_settings(args, settings, error)) {
    return std::nullopt;
  }
  config.apply_timing(timing);
  settings.derived = derived_timing_options(args);
  // The client's requests beside the elector (the first read, a release) are bounded alike.
  target.set_request_timeout(config.request_timeout);
  auto serve = make_serve_settings(args, config, error);
  if (!serve) return std::nullopt;
  settings.serve = std::move(*serve);
  if (auto problem = config.validate()) {
    error = invalid_configuration(args, *problem);
    return std::nullopt;
  }
  if (validate_store_trust(config.peer, target.answers_authenticated())) {
    error = "--peer: the store at " + target.endpoint() +
            " is reached over plain HTTP, which authenticates no answer: anyone on the network "
            "path can forge the lock record's leaderAddr and peerKeyPin and pin the followers "
            "to an impostor that keeps them off the store and the lock, and the session token "
            "travels in clear. Use an https:// --endpoint, CA mode (--peer-cert, --peer-key, "
            "--peer-ca), or --trust-plain-http-store if that path is trusted "
            "(docs/peer-mode.md#trust-chain)";
    return std::nullopt;
  }
  return settings;
}

}  // namespace s3lect::cli
