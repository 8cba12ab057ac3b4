// The descriptors a process holds, and how a process forked without exec (the guardian's
// helpers: the job's first process, a PID namespace's parent and init) gives up those it
// inherited, as an exec would have: such a process lives beside the job, and whatever it holds
// a process of the job could take from it (pidfd_getfd) or use.
#pragma once

#include <cstddef>
#include <set>
#include <vector>

namespace s3lect::guardian {

/// The file descriptors above 2 that are open now: from /proc/self/fd on Linux, else by asking
/// each number below RLIMIT_NOFILE (a descriptor opened above a limit lowered since is missed).
std::set<int> open_descriptors();

/// What a forked helper closes, worked out before the fork (listing descriptors is not
/// async-signal-safe): every descriptor above 2 marked close-on-exec, i.e. the forking
/// process's own (its control socket, timer and signal descriptors, the s3lect binary's
/// descriptor, launch pipes of other helpers), except those the helper itself needs. Those
/// without close-on-exec are the user's (inherited by s3lect and handed on to the command) and
/// stay.
struct descriptor_closing {
  std::vector<int> keep;   ///< Sorted: the descriptors above 2 that stay open.
  std::vector<int> close;  ///< The open descriptors above 2 that are not kept.
  /// Without close_range: every descriptor from 3 below this that is not kept is closed, so that
  /// one opened after the plan is closed too (the descriptor limit, at most 65536).
  int end = 0;
};

/// The closing for a helper that needs `needed` (its own pipe ends) of this process's
/// descriptors. The caller is single-threaded: nothing opens a descriptor between this and the
/// fork.
descriptor_closing plan_descriptor_closing(const std::vector<int>& needed);

/// In the forked helper: closes every descriptor above 2 that `plan` does not keep, those
/// opened after the plan was made included (close_range over the gaps between the kept ones,
/// where the kernel has it; else the listed ones one by one). Async-signal-safe.
void close_inherited_descriptors(const descriptor_closing& plan);

}  // namespace s3lect::guardian
