#include "guardian/cloexec.hpp"

#include "base/platform.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace s3lect::guardian {

#if !S3LECT_LINUX_FACILITIES
namespace {

/// Marks both descriptors close-on-exec, or closes them both and returns false with errno set.
bool mark_cloexec(int (&fds)[2]) {
  for (const int fd : fds) {
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      const int error = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      errno = error;
      return false;
    }
  }
  return true;
}

}  // namespace
#endif

bool open_cloexec_pipe(int (&fds)[2]) {
#if S3LECT_LINUX_FACILITIES
  return ::pipe2(fds, O_CLOEXEC) == 0;
#else
  return ::pipe(fds) == 0 && mark_cloexec(fds);
#endif
}

bool open_cloexec_socketpair(int type, int (&fds)[2]) {
#if S3LECT_LINUX_FACILITIES
  return ::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) == 0;
#else
  return ::socketpair(AF_UNIX, type, 0, fds) == 0 && mark_cloexec(fds);
#endif
}

}  // namespace s3lect::guardian
