// A cgroup v2 of the job's own, below the guardian's cgroup: every process of the job stays in
// it whatever it does (setsid, double forks), and cgroup.kill ends them all at once. Available
// where the guardian may create cgroups below its own: as root, or in a cgroup delegated to its
// user (systemd's Delegate=yes).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace s3lect::guardian {

/// Where this process's cgroup v2 directory is (the cgroup2 mount + its path in
/// /proc/self/cgroup), or why there is none: empty `directory` and `error` set.
struct cgroup_location {
  std::string directory;
  std::string error;
};
cgroup_location own_cgroup();

/// The cgroup2 directory of a cgroup2 mount from /proc/self/mountinfo and the "0::PATH" line of
/// /proc/self/cgroup; empty when either has none (cgroup v1 only).
std::string cgroup_directory(const std::string& mountinfo, const std::string& proc_cgroup);

/// A job's cgroup: created empty, joined by the job's first process before it runs anything,
/// killed and removed when the job is over.
class job_cgroup {
 public:
  /// Creates `parent`/s3lect-job-PID (PID: this process's). nullopt with errno set on failure.
  static std::optional<job_cgroup> create(const std::string& parent);

  job_cgroup(job_cgroup&& other) noexcept;
  job_cgroup& operator=(job_cgroup&& other) noexcept;
  ~job_cgroup();

  /// The directory, e.g. /sys/fs/cgroup/system.slice/s3lect@x.service/s3lect-job-4242.
  const std::string& directory() const noexcept { return directory_; }

  /// Moves `pid` (with the threads and children it will have) into the cgroup. false with
  /// errno set on failure.
  bool adopt(pid_t pid) const;

  /// SIGKILLs every process in the cgroup, atomically with cgroup.kill (Linux 5.14), else one by
  /// one from cgroup.procs. Returns false when neither could be done.
  bool kill_all() const;

  /// Removes the directory; it must have no process left. Returns false with errno set if not.
  bool remove();

 private:
  explicit job_cgroup(std::string directory);
  std::string directory_;
  bool removed_ = false;
};

/// Kills what is left in the cgroup at `directory` and removes it (what s3lect does when the
/// guardian itself died). Returns false when the cgroup could not be emptied and removed.
bool kill_and_remove_cgroup(const std::string& directory);

}  // namespace s3lect::guardian
