// What `s3lect run` was asked to do, apart from running it (run.hpp): the command supervisor and
// the effective configuration read it.
#pragma once

#include "cli/elector_options.hpp"
#include "cli/run_extra_options.hpp"
#include "cli/store_options.hpp"

#include <chrono>
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

}  // namespace s3lect::cli
