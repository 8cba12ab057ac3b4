// Starting the command under the guardian: in its own process group, as the guardian's child or
// as the first process of a PID namespace of its own (whose init the guardian's child is), and
// in a cgroup of its own, as asked.
#pragma once

#include "guardian/job_cgroup.hpp"

#include <signal.h>
#include <sys/types.h>

#include <atomic>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace s3lect::guardian {

/// What keeps the job's processes together beyond the guardian itself (docs/operations.md).
struct isolation {
  /// The job is a PID namespace of its own, whose init dies with the guardian: then the kernel
  /// kills every process of the job, whatever killed the guardian.
  bool pid_namespace = false;
  /// The job is a cgroup v2 of its own: no process of it can leave, and cgroup.kill ends them
  /// all at once.
  bool cgroup = false;
  friend bool operator==(const isolation&, const isolation&) = default;
};

/// "guardian", "pid-namespace", "cgroup" or "pid-namespace+cgroup".
std::string isolation_name(isolation level);
/// Parses the names isolation_name gives (with '+' or ','); nullopt for anything else.
std::optional<isolation> parse_isolation(std::string_view text);

/// What to start, and how.
struct launch_request {
  std::string path;               ///< The resolved executable.
  std::vector<std::string> argv;  ///< argv[0] included.
  isolation level;
  /// The cgroup below which the job's own is made (with level.cgroup).
  std::string cgroup_parent;
  /// The signals the command gets ignored (those ignored when the guardian started); the
  /// others get their default action. And the signal mask it gets.
  sigset_t ignored{};
  sigset_t mask{};
  /// The command's whole environment (each NAME=VALUE); nullopt: the guardian's own.
  std::optional<std::vector<std::string>> environment;
  /// A probe of the isolation: the job's first process exits 0 where it would exec.
  bool probe = false;
};

/// What the init of a job's PID namespace tells the guardian: the command's PID in the
/// namespace, then how many other processes still ran when the command exited (it kills them
/// then). In memory the two share (an anonymous shared mapping made before the fork), so that
/// no descriptor of the guardian's is in the namespace for a process of the job to take.
struct namespace_report {
  std::atomic<pid_t> command{0};
  std::atomic<unsigned> leftovers{0};
};
// Shared between processes: only atomics that need no lock (which would live in one process).
static_assert(std::atomic<pid_t>::is_always_lock_free &&
              std::atomic<unsigned>::is_always_lock_free);

/// An anonymous shared mapping holding a namespace_report, unmapped on destruction.
class shared_report {
 public:
  /// nullopt when the mapping could not be made (errno set).
  static std::optional<shared_report> create();
  shared_report(shared_report&& other) noexcept;
  shared_report& operator=(shared_report&& other) noexcept;
  ~shared_report();
  namespace_report& get() const noexcept { return *report_; }

 private:
  explicit shared_report(namespace_report* report) : report_(report) {}
  namespace_report* report_;
};

/// A started job.
struct launched_job {
  pid_t root = 0;     ///< The guardian's child: the command, or the PID namespace's init.
  pid_t command = 0;  ///< The command's PID, as this machine's PID namespace numbers it.
  std::optional<job_cgroup> cgroup;
  /// With a PID namespace: what its init reports.
  std::optional<shared_report> report;
};

/// Why a job could not start: the errno of the step that failed.
struct launch_error {
  int error = 0;
  std::string step;  ///< "cgroup", "user-namespace", "pid-namespace", "proc", "exec", ...
};

/// "STEP: REASON" for `error`, as the probe and s3lect say it.
std::string launch_problem(const launch_error& error);

/// Starts the job (a PID namespace or a cgroup only on Linux: elsewhere asking for one fails
/// with ENOTSUP). Blocks until the command has been exec'd (or failed to be): microseconds,
/// or a few milliseconds with a PID namespace.
std::variant<launched_job, launch_error> launch_job(const launch_request& request);

/// How many leftovers the init of `job`'s PID namespace reported; 0 without one, or when it
/// reported nothing. Read once the job's first process has been reaped.
unsigned read_leftovers(const launched_job& job);

}  // namespace s3lect::guardian
