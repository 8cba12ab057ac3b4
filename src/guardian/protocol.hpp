// The messages between `s3lect run` and the guardian of its job (s3lect-guardian), each read
// whole or not at all from their control socket (control_socket.hpp: one per SOCK_SEQPACKET
// packet on Linux, framed on a stream elsewhere), whose end of file tells each side that the
// other process is gone.
//
// s3lect -> guardian                      guardian -> s3lect
//   until BOOT_NS TERM NONCE                started PID ISOLATION [CGROUP]
//   signal N                                failed ERRNO STEP
//   stop GRACE_MS                           ended STATUS CAUSE LEFTOVERS
//   kill
//   bye
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace s3lect::guardian {

/// The longest message either side sends; receivers read into a buffer this size.
inline constexpr std::size_t max_packet = 4096;

/// The leadership is confirmed until `boot_ns` on CLOCK_BOOTTIME (no later than the elector's
/// own demotion deadline), by the write with `nonce` of term `term`.
struct lead_until {
  std::int64_t boot_ns = 0;
  std::uint64_t term = 0;
  std::string nonce;
  friend bool operator==(const lead_until&, const lead_until&) = default;
};
/// Send `signal` to the command's process group (SIGHUP, SIGUSR1, SIGUSR2 passed on).
struct forward_signal {
  int signal = 0;
  friend bool operator==(const forward_signal&, const forward_signal&) = default;
};
/// Stop the job: SIGTERM to every process of its tree, SIGKILL after `grace_ms`.
struct stop_job {
  std::int64_t grace_ms = 0;
  friend bool operator==(const stop_job&, const stop_job&) = default;
};
/// SIGKILL every process of the job's tree now.
struct kill_job {
  friend bool operator==(const kill_job&, const kill_job&) = default;
};
/// s3lect is done with the guardian: once the job is gone, exit without releasing anything.
struct farewell {
  friend bool operator==(const farewell&, const farewell&) = default;
};
using to_guardian = std::variant<lead_until, forward_signal, stop_job, kill_job, farewell>;

/// The command runs, as `pid` (in this machine's PID namespace), isolated as `isolation`
/// ("guardian", "pid-namespace", "cgroup" or "pid-namespace+cgroup"), in `cgroup` (a path
/// under the cgroup2 mount) when it has a cgroup of its own.
struct job_started {
  pid_t pid = 0;
  std::string isolation;
  std::string cgroup;
  friend bool operator==(const job_started&, const job_started&) = default;
};
/// The command could not be started: `error` is the errno of the step that failed ("exec",
/// "fork", "cgroup", "pid-namespace", ...). The guardian exits after sending it.
struct job_failed {
  int error = 0;
  std::string step;
  friend bool operator==(const job_failed&, const job_failed&) = default;
};
/// Why the job ended.
enum class end_cause {
  exited,    ///< Its main process exited by itself.
  stopped,   ///< It ended after a stop's SIGTERM, within the grace.
  killed,    ///< It was SIGKILLed: the grace ran out, or kill was asked for.
  deadline,  ///< The leadership was not confirmed in time: the guardian stopped it by itself.
};
/// The job is over and every process of its tree has been reaped. `status` is the main
/// process's shell status (128 + N when killed by signal N); `leftovers` counts the other
/// processes of the tree that were still running when the main process ended and were killed.
struct job_ended {
  int status = 0;
  end_cause cause = end_cause::exited;
  unsigned leftovers = 0;
  friend bool operator==(const job_ended&, const job_ended&) = default;
};
using from_guardian = std::variant<job_started, job_failed, job_ended>;

/// The packet for `message`.
std::string encode(const to_guardian& message);
std::string encode(const from_guardian& message);

/// The message in `packet`, or nullopt when it is not one.
std::optional<to_guardian> decode_to_guardian(std::string_view packet);
std::optional<from_guardian> decode_from_guardian(std::string_view packet);

/// "exited", "stopped", "killed", "deadline".
std::string_view cause_name(end_cause cause);

}  // namespace s3lect::guardian
