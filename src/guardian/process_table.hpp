// The processes of this machine as /proc shows them, and signals sent to a process tree without
// ever hitting a stranger that reused the PID of a process that just ended.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace s3lect::guardian {

/// One process, from /proc/PID/stat.
struct process_info {
  pid_t pid = 0;
  pid_t parent = 0;
  /// When it started, in clock ticks after boot: with the PID, it names one process for ever.
  std::uint64_t start_time = 0;
  char state = '?';  ///< 'R', 'S', 'Z' (exited, not reaped yet), ...
};

/// A pidfd for `pid` (close-on-exec), or -1 with errno set: ENOSYS where the kernel (before
/// 5.3) or libc has no pidfd_open, and on other systems.
int open_pidfd(pid_t pid);

/// Parses the text of /proc/PID/stat; nullopt when it is not one.
std::optional<process_info> parse_process_stat(std::string_view text);

/// `pid` as /proc shows it now; nullopt when there is no such process.
std::optional<process_info> read_process(pid_t pid);

/// The PID that `pid` has in the innermost PID namespace it is in (the last number of the
/// NSpid line of /proc/PID/status); nullopt when it cannot be read.
std::optional<pid_t> innermost_pid(pid_t pid);

/// Every process /proc shows now.
std::vector<process_info> read_process_table();

/// The processes of `table` whose chain of parents leads to `root` (root itself excluded).
std::vector<process_info> descendants_of(const std::vector<process_info>& table, pid_t root);

/// Sends `signal` to every descendant of `root` as /proc shows them now, except `spare` (0:
/// none). Each one is named by a pidfd and checked to be the process that was listed (same start
/// time) before the signal goes, so a PID reused in between is never signalled. Returns how many
/// of them had not exited yet.
unsigned signal_descendants(pid_t root, int signal, pid_t spare = 0);

/// Sends `signal` to the process `listed`, if it is still that process (see above).
bool signal_process(const process_info& listed, int signal);

}  // namespace s3lect::guardian
