// s3lect_channel_thief: what a job's process, hostile to its own guardian, could take from the
// processes it can see (docs/chaos.md, "Attacks by the job"): with pidfd_open and pidfd_getfd
// (Linux 5.6; a process of the same user may take a descriptor from a dumpable process), every
// descriptor above 2 of each process named that this process does not hold itself.
//   s3lect_channel_thief [--forge] PID...
// One line per descriptor taken: `taken PID FD KIND` (KIND: socket, pipe, file, other); with
// --forge, every socket taken is also sent the guardian's report that the job ended, as a job
// that took the control socket from the PID namespace's init would, to fool s3lect into
// releasing the lock while the job runs on. Then `result taken=N refused=M` (M: the processes
// that refused, e.g. not dumpable). Exit 0 when nothing was taken, 3 when something was, 2 on a
// usage error.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

/// The objects (device, inode) this process's own descriptors above 2 refer to: taking one of
/// those from another process gains nothing.
std::set<std::pair<dev_t, ino_t>> own_objects() {
  std::set<std::pair<dev_t, ino_t>> objects;
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat info {};
    if (::fstat(fd, &info) == 0) objects.insert({info.st_dev, info.st_ino});
  }
  return objects;
}

const char* kind_of(const struct stat& info) {
  if (S_ISSOCK(info.st_mode)) return "socket";
  if (S_ISFIFO(info.st_mode)) return "pipe";
  if (S_ISREG(info.st_mode) || S_ISDIR(info.st_mode)) return "file";
  return "other";
}

/// Takes what it can from `pid`; false when the process refused every attempt (or is gone).
bool rob(pid_t pid, bool forge, const std::set<std::pair<dev_t, ino_t>>& own, int& taken) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  bool refused = false;
  for (int fd = 3; fd < 1024; ++fd) {
    const int copy = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    if (copy < 0) {
      if (errno == EPERM) refused = true;
      if (errno == EPERM || errno == ESRCH) break;
      continue;
    }
    struct stat info {};
    if (::fstat(copy, &info) == 0 && own.count({info.st_dev, info.st_ino}) == 0) {
      ++taken;
      std::printf("taken %d %d %s\n", static_cast<int>(pid), fd, kind_of(info));
      if (forge && S_ISSOCK(info.st_mode)) {
        const char report[] = "ended 0 exited 0";
        ::send(copy, report, sizeof report - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    ::close(copy);
  }
  ::close(pidfd);
  return !refused;
}

}  // namespace

int main(int argc, char** argv) {
  bool forge = false;
  std::vector<pid_t> targets;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--forge") == 0) {
      forge = true;
    } else if (const long pid = std::strtol(argv[i], nullptr, 10); pid > 0) {
      targets.push_back(static_cast<pid_t>(pid));
    } else {
      std::fprintf(stderr, "usage: s3lect_channel_thief [--forge] PID...\n");
      return 2;
    }
  }
  if (targets.empty()) {
    std::fprintf(stderr, "usage: s3lect_channel_thief [--forge] PID...\n");
    return 2;
  }
  const auto own = own_objects();
  int taken = 0;
  int refused = 0;
  for (const pid_t pid : targets) {
    if (!rob(pid, forge, own, taken)) ++refused;
  }
  std::printf("result taken=%d refused=%d\n", taken, refused);
  return taken > 0 ? 3 : 0;
}
