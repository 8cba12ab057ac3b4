// `s3lect status --watch`: reads the lock record every --interval, or follows the leader's peer
// endpoint when the record names one it can trust, and prints one line per change of who leads
// (text, or JSON lines with --json) until SIGINT or SIGTERM.
#pragma once

#include "cli/options.hpp"
#include "cli/store_options.hpp"

#include <string>
#include <vector>

namespace s3lect::cli {

/// Flag names `status` takes for watching.
const std::vector<std::string>& status_watch_flag_names();
/// Valued option names `status` takes for watching.
const std::vector<std::string>& status_watch_valued_names();
/// Help text of the watch options, and what a watch prints.
const char* status_watch_help();

/// Runs the watch of `target` as `args` ask; returns the exit code: 0 when interrupted, 2 for a
/// bad option, 4 when the store refuses us (failures that retrying can fix are reported on
/// stderr and retried every interval).
int run_status_watch(const parsed_args& args, const store_target& target);

}  // namespace s3lect::cli
