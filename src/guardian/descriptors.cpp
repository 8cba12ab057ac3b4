#include "guardian/descriptors.hpp"

#include "base/platform.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <dirent.h>
#include <sys/syscall.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace s3lect::guardian {

#if S3LECT_LINUX_FACILITIES

std::set<int> open_descriptors() {
  std::set<int> result;
  DIR* directory = ::opendir("/proc/self/fd");
  if (!directory) return result;
  const int own = ::dirfd(directory);
  while (const dirent* entry = ::readdir(directory)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd <= 2 || fd == own) continue;
    result.insert(static_cast<int>(fd));
  }
  ::closedir(directory);
  return result;
}

#else

std::set<int> open_descriptors() {
  std::set<int> result;
  rlimit limit{};
  const rlim_t end = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                         ? limit.rlim_cur
                         : static_cast<rlim_t>(::sysconf(_SC_OPEN_MAX));
  for (rlim_t fd = 3; fd < end; ++fd) {
    if (::fcntl(static_cast<int>(fd), F_GETFD) >= 0) result.insert(static_cast<int>(fd));
  }
  return result;
}

#endif

descriptor_closing plan_descriptor_closing(const std::vector<int>& needed) {
  descriptor_closing plan;
  for (const int fd : open_descriptors()) {
    const int flags = ::fcntl(fd, F_GETFD);
    const bool users = flags >= 0 && (flags & FD_CLOEXEC) == 0;
    const bool wanted = std::find(needed.begin(), needed.end(), fd) != needed.end();
    (users || wanted ? plan.keep : plan.close).push_back(fd);
  }
  std::sort(plan.keep.begin(), plan.keep.end());
  rlimit limit{};
  const long open_max = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                            ? static_cast<long>(limit.rlim_cur)
                            : ::sysconf(_SC_OPEN_MAX);
  plan.end = static_cast<int>(std::clamp<long>(open_max, 1024, 65536));
  for (const int fd : plan.close) plan.end = std::max(plan.end, fd + 1);
  return plan;
}

namespace {

/// close_range(2) of [first, last]; false where the kernel (before 5.9) or the system has none.
bool close_range_of(unsigned first, unsigned last) {
#if S3LECT_LINUX_FACILITIES && defined(SYS_close_range)
  return ::syscall(SYS_close_range, first, last, 0) == 0;
#else
  (void)first;
  (void)last;
  errno = ENOSYS;
  return false;
#endif
}

}  // namespace

void close_inherited_descriptors(const descriptor_closing& plan) {
  unsigned next = 3;  // the lowest descriptor not yet dealt with
  bool ranges = true;
  for (const int kept : plan.keep) {
    const auto fd = static_cast<unsigned>(kept);
    if (fd > next && ranges) ranges = close_range_of(next, fd - 1);
    next = fd + 1;
  }
  if (ranges && close_range_of(next, UINT_MAX)) return;
  // No close_range (another system, or Linux before 5.9): each descriptor in turn, as closefrom
  // would, the kept ones aside. close() of one that is not open only fails with EBADF.
  std::size_t k = 0;
  for (int fd = 3; fd < plan.end; ++fd) {
    while (k < plan.keep.size() && plan.keep[k] < fd) ++k;
    if (k < plan.keep.size() && plan.keep[k] == fd) continue;
    ::close(fd);
  }
}

}  // namespace s3lect::guardian
