// What `s3lect run` will use: every timing setting after --lease derived the ones not given,
// for --print-config and the debug log.
#pragma once

#include "cli/log_output.hpp"
#include "cli/options.hpp"
#include "cli/run_options.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace s3lect::cli {

/// One setting: the option that sets it, its effective value as that option would take it,
/// and whether --lease derived it. A flag (--no-preempt) has the value "true" when given and
/// "" when not, and prints without a value.
struct effective_setting {
  std::string option;
  std::string value;
  bool derived = false;
  bool flag = false;
};

/// The settings `s3lect run` runs with, in the order of its help.
std::vector<effective_setting> effective_settings(const run_options& options);

/// What --print-config prints: one `--option value` line per setting, padded, with
/// "# derived" after the derived ones, so that the lines can be pasted back.
std::string print_config_text(const run_options& options);

/// The same settings as fields of one debug log line, "derived" listing the derived options.
std::vector<log_field> effective_config_fields(const run_options& options);

}  // namespace s3lect::cli
