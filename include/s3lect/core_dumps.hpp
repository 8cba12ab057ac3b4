// Keeping secrets out of core dumps: the AWS secret key, session tokens and the peer endpoint's
// private key live in the process's memory, and a core dump (or another process of the same
// user attaching with ptrace) would copy them out. The library never changes process-wide state
// behind its user's back, so it does not call this itself; an application calls it once at
// start-up, as `s3lect` does (docs/operations.md#core-dumps).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <boost/system/error_code.hpp>

namespace s3lect::inline v1 {

/// Marks this process not dumpable. On Linux, prctl(PR_SET_DUMPABLE, 0): no core dump is
/// written whatever `ulimit -c` says, other processes of the same user can no longer ptrace it
/// or read its /proc/PID/mem, environ, maps or fd, and /proc/PID belongs to root. A program the
/// process starts with execve() is dumpable again (the kernel resets the flag on exec of a
/// non-set-user-ID file), so child commands are not affected. On other systems,
/// setrlimit(RLIMIT_CORE, 0), which children inherit. Returns the failed call's errno as an
/// error_code, empty on success. Thread-safe; affects the whole process.
boost::system::error_code exclude_from_core_dumps() noexcept;

}  // namespace s3lect::inline v1
