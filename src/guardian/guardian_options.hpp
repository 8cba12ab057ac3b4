// The command line of s3lect-guardian, as `s3lect run` builds it
// (supervision/guardian_process.cpp). Not a user interface: every value is checked, and anything
// unexpected ends the guardian before it starts a job.
#pragma once

#include "guardian/job_launch.hpp"
#include "guardian/protocol.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::guardian {

/// What the command line asks for.
struct guardian_options {
  /// --probe: report which isolation works here (one line each) instead of running a job.
  bool probe = false;
  int control_fd = -1;                      ///< --control-fd N
  lead_until confirmed;                     ///< --until-ns NS --term T --nonce N
  std::chrono::milliseconds kill_grace{0};  ///< --kill-grace-ms MS
  isolation level;                          ///< --isolation NAME
  int release_exe_fd = -1;                  ///< --release-exe-fd N (none: no release)
  /// --release-args-fd N: a file holding the release's arguments, each ended by a NUL (kept
  /// out of the command line, which `ps` shows).
  int release_args_fd = -1;
  /// --job-env-fd N: a file holding the command's whole environment, each variable ended by a
  /// NUL; without it the command gets the guardian's own. s3lect passes it so that no secret of
  /// its environment is in the guardian's, which /proc/PID/environ shows.
  int job_env_fd = -1;
  /// --release-env-fd N: the same for the release that runs should s3lect die (s3lect's
  /// environment, credentials included).
  int release_env_fd = -1;
  bool log_json = false;                                        ///< --log-format json
  bool log_info = false;                                        ///< --log-info
  std::vector<std::pair<std::string, std::string>> log_fields;  ///< --log-field KEY=VALUE
  std::string path;                                             ///< After --: the executable,
  std::vector<std::string> argv;                                ///< then argv[0] and the arguments.
};

/// The NUL-ended arguments in the file open as `fd`, read from its start; closes it. nullopt
/// when it cannot be read.
std::optional<std::vector<std::string>> read_argument_file(int fd);

/// Parses the arguments after argv[0]; nullopt with `error` set when they are not valid.
std::optional<guardian_options> parse_guardian_options(const std::vector<std::string>& args,
                                                       std::string& error);

}  // namespace s3lect::guardian
