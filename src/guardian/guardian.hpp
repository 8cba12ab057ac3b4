// The job guardian (s3lect-guardian): a small process between `s3lect run` and its command
// that owns the command's whole process tree, so that no process of the job outlives the
// leadership whatever happens to the s3lect process (docs/safety-and-fencing.md#the-job-guardian).
//
// On Linux it is a child subreaper, so every descendant of the command, setsid daemons included,
// stays in its tree. It ends the whole tree
//   - at T + kill grace, T being the "leading until" time s3lect last confirmed (no later than
//     its own demotion deadline), on its own boot clock (CLOCK_BOOTTIME on Linux): a stopped or
//     stuck s3lect cannot keep the job alive (SIGTERM at T, SIGKILL at T + grace);
//   - at once, with SIGKILL, when s3lect's end of the control socket closes (s3lect died); once
//     every process is reaped it then releases the lock on s3lect's behalf, conditionally on
//     s3lect's last write, so that a follower takes over at once;
//   - as s3lect asks: stop (SIGTERM, SIGKILL after the grace) or kill.
// When the command's main process exits, whatever is left of its tree is killed.
#pragma once

#include "guardian/guardian_log.hpp"
#include "guardian/job_launch.hpp"
#include "guardian/protocol.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::guardian {

/// How to release the lock when s3lect is gone: exec `s3lect` (the binary s3lect itself runs
/// from, open as `exe_fd`) as `s3lect __guardian-release --term T --nonce N ... ARGS`, ARGS
/// being what s3lect gave (its slot, `--` and the arguments of `s3lect run`).
struct release_plan {
  int exe_fd = -1;
  std::vector<std::string> run_args;
  /// The release's environment (s3lect's, with its credentials); nullopt: the guardian's own.
  std::optional<std::vector<std::string>> environment;
};

/// Everything the guardian is started with.
struct guardian_settings {
  int control_fd = -1;
  lead_until confirmed;  ///< The first deadline, before the command starts.
  std::chrono::milliseconds kill_grace{0};
  launch_request launch;
  std::optional<release_plan> release;
};

/// Runs the guardian until the job is over and s3lect said goodbye or is gone; releases the
/// lock (by exec, not returning) when s3lect is gone. Returns the guardian's exit status.
int run_guardian(const guardian_settings& settings, const guardian_log& log);

/// The boot clock's time in nanoseconds: CLOCK_BOOTTIME on Linux, the same clock as s3lect's
/// boot_clock (base/platform.hpp).
std::int64_t boot_now_ns();

}  // namespace s3lect::guardian
