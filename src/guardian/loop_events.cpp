#include "guardian/loop_events.hpp"

#include "base/platform.hpp"
#include "guardian/cloexec.hpp"
#include "guardian/guardian.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>

namespace s3lect::guardian {

#if S3LECT_LINUX_FACILITIES

bool child_exits::open() {
  // Blocked, so that SIGCHLD is only ever read from the signalfd; the job gets the mask the
  // guardian started with (launch_request::mask), not this one.
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child_signal, nullptr);
  read_fd_ = ::signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  return read_fd_ >= 0;
}

void child_exits::drain() {
  signalfd_siginfo info{};
  while (::read(read_fd_, &info, sizeof info) == sizeof info) {
  }
}

child_exits::~child_exits() {
  if (read_fd_ >= 0) ::close(read_fd_);
}

bool deadline_alarm::open() {
  fd_ = ::timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  return fd_ >= 0;
}

void deadline_alarm::arm(std::optional<std::int64_t> wake) {
  wake_ = wake;
  itimerspec setting{};
  if (wake) {
    // Relative, on CLOCK_BOOTTIME: a suspend counts, and no library that shifts absolute
    // clocks (libfaketime) moves it.
    const std::int64_t left = std::max<std::int64_t>(*wake - boot_now_ns(), 1);
    setting.it_value.tv_sec = static_cast<time_t>(left / 1'000'000'000);
    setting.it_value.tv_nsec = static_cast<long>(left % 1'000'000'000);
  }
  ::timerfd_settime(fd_, 0, &setting, nullptr);
}

int deadline_alarm::poll_timeout_ms() const {
  return -1;
}

bool deadline_alarm::fired(short revents) {
  if (revents == 0) return false;
  std::uint64_t expirations = 0;
  [[maybe_unused]] const ssize_t ignored = ::read(fd_, &expirations, sizeof expirations);
  return true;
}

#else

namespace {

/// The self-pipe's write end, for the handler (one guardian loop per process).
int child_exit_pipe = -1;

void on_child_signal(int) {
  const int saved = errno;  // The handler may interrupt code that reads errno.
  const char byte = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(child_exit_pipe, &byte, 1);
  errno = saved;
}

}  // namespace

bool child_exits::open() {
  int fds[2];
  if (!open_cloexec_pipe(fds)) return false;
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  // Non-blocking both ways: a full pipe already says that a child exited.
  for (const int fd : fds) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  child_exit_pipe = write_fd_;
  struct sigaction action {};
  action.sa_handler = on_child_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  return ::sigaction(SIGCHLD, &action, nullptr) == 0;
}

void child_exits::drain() {
  char bytes[64];
  while (::read(read_fd_, bytes, sizeof bytes) > 0) {
  }
}

bool deadline_alarm::open() {
  return true;
}

void deadline_alarm::arm(std::optional<std::int64_t> wake) {
  wake_ = wake;
}

int deadline_alarm::poll_timeout_ms() const {
  if (!wake_) return -1;
  // Rounded up, so that the loop never wakes before the deadline and spins.
  const std::int64_t left_ns = std::max<std::int64_t>(*wake_ - boot_now_ns(), 0);
  return static_cast<int>(std::min<std::int64_t>((left_ns + 999'999) / 1'000'000, INT_MAX));
}

bool deadline_alarm::fired(short) {
  return wake_ && boot_now_ns() >= *wake_;
}

child_exits::~child_exits() {
  if (read_fd_ < 0) return;
  ::signal(SIGCHLD, SIG_DFL);
  child_exit_pipe = -1;
  ::close(read_fd_);
  ::close(write_fd_);
}

#endif

deadline_alarm::~deadline_alarm() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace s3lect::guardian
