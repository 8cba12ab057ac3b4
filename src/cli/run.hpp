// `s3lect run`: campaigns for the lock and runs a command only while leader.
#pragma once

#include "cli/elector_options.hpp"
#include "cli/run_extra_options.hpp"
#include "cli/store_options.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Everything `s3lect run` was asked to do.
struct run_options {
  store_target store;
  elector_settings elector;
  /// After SIGTERM, the command has this long to exit before SIGKILL.
  std::chrono::milliseconds kill_grace{std::chrono::seconds{3}};
  /// At start-up, retry a store that retrying can fix (unreachable, 5xx, throttling) every
  /// frequent interval instead of exiting 4.
  bool wait_for_store = false;
  std::vector<std::string> command;  ///< The command and its arguments, after `--`.
  /// The arguments `s3lect run` was given (after `run`): the job guardian releases the lock with
  /// them should s3lect die.
  std::vector<std::string> args;
  /// --print-config, --timeout, --pass-stdin and --slots.
  run_extras extras;
};

/// Runs `s3lect run` with the arguments after the subcommand; returns the exit code.
int run_run(const std::vector<std::string>& args);

/// Help text of `s3lect run`.
std::string run_help();

/// Parses and validates the options of `s3lect run` (not the command's existence). Returns
/// nullopt and sets `error` to one line naming the option at fault.
std::optional<run_options> parse_run_options(const std::vector<std::string>& args,
                                             std::string& error);

/// Checks that a command stopped at the renew deadline is gone, kill grace included, before
/// any other node may take over: kill_grace < lease - renew_deadline. nullopt when it is.
std::optional<std::string> check_kill_grace(std::chrono::milliseconds kill_grace,
                                            const elector_config& config);

}  // namespace s3lect::cli
