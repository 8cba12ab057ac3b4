#include "cli/effective_config.hpp"

#include <algorithm>

namespace s3lect::cli {

using std::chrono::milliseconds;

namespace {

std::string format_delays(const std::vector<milliseconds>& delays) {
  if (delays.empty()) return "none";
  std::string text;
  for (const milliseconds delay : delays) {
    if (!text.empty()) text += ',';
    text += format_duration(delay);
  }
  return text;
}

}  // namespace

std::vector<effective_setting> effective_settings(const run_options& options) {
  const elector_config& config = options.elector.config;
  const std::vector<std::string>& derived = options.elector.derived;
  std::vector<effective_setting> settings{
      {"lock", options.store.url()},
      {"id", config.server_id},
      {"addr", config.server_address},
      {"lease", format_duration(config.lease)},
      {"renew-deadline", format_duration(config.renew_deadline)},
      {"frequent", format_duration(config.frequent_interval)},
      {"infrequent", format_duration(config.infrequent_interval)},
      {"follower-reads",
       config.s3_follower_reads == follower_reads::economy ? "economy" : "first-hand"},
      {"max-clock-skew",
       config.max_clock_skew ? format_duration(*config.max_clock_skew) : std::string("off")},
      {"acquire-grace", format_duration(config.acquire_grace)},
      {"request-timeout", format_duration(config.request_timeout)},
      {"retry-delays", format_delays(config.retry.delays)},
      {"priority", std::to_string(config.coordination.priority)},
      {"handover-window", format_duration(config.handover_window())},
      {"rank-step", format_duration(config.rank_step())},
      {"settle", format_duration(config.settle_time())},
      // A flag: listed (with no value) only when given; an empty value is never printed.
      {"no-preempt", config.coordination.preempt == preemption::off ? "true" : "", false, true},
      {"peer-timeout", format_duration(config.peer.timeout)},
      {"kill-grace", format_duration(options.kill_grace)},
      {"isolation", options.extras.isolation ? guardian::isolation_name(*options.extras.isolation)
                                             : std::string("auto")},
  };
  for (effective_setting& setting : settings) {
    setting.derived = std::find(derived.begin(), derived.end(), setting.option) != derived.end();
  }
  return settings;
}

std::string print_config_text(const run_options& options) {
  std::string text;
  for (const effective_setting& setting : effective_settings(options)) {
    // An empty value (no --addr) would not read back as an option.
    if (setting.value.empty()) continue;
    std::string line = "--" + setting.option;
    if (!setting.flag) line += " " + setting.value;
    if (setting.derived) {
      line.resize(std::max<std::size_t>(line.size() + 1, 32), ' ');
      line += "# derived";
    }
    text += line + "\n";
  }
  return text;
}

std::vector<log_field> effective_config_fields(const run_options& options) {
  std::vector<log_field> fields;
  std::string derived;
  for (const effective_setting& setting : effective_settings(options)) {
    fields.push_back({setting.option, setting.value});
    if (!setting.derived) continue;
    if (!derived.empty()) derived += ',';
    derived += setting.option;
  }
  fields.push_back({"derived", derived});
  return fields;
}

}  // namespace s3lect::cli
