// What the guardian's poll loop waits on besides s3lect's control socket: its children's exits
// and its next deadline on the boot clock. On Linux a signalfd for SIGCHLD and a timerfd on
// CLOCK_BOOTTIME, which fires on resume when the deadline passed during a suspend. Elsewhere a
// self-pipe written by a SIGCHLD handler, and poll's own timeout, which a suspend may stretch
// (docs/operations.md, Other systems).
#pragma once

#include <cstdint>
#include <optional>

namespace s3lect::guardian {

/// SIGCHLD as a readable descriptor.
class child_exits {
 public:
  child_exits() = default;
  ~child_exits();
  child_exits(const child_exits&) = delete;
  child_exits& operator=(const child_exits&) = delete;

  /// Starts catching SIGCHLD. false with errno set when it cannot.
  bool open();
  /// Readable once a child exited since the last drain().
  int fd() const { return read_fd_; }
  /// Clears the readiness; then reap with waitpid until it finds no more.
  void drain();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;  ///< The self-pipe's write end (without a signalfd).
};

/// The loop's next wake-up, on the boot clock (boot_now_ns()).
class deadline_alarm {
 public:
  deadline_alarm() = default;
  ~deadline_alarm();
  deadline_alarm(const deadline_alarm&) = delete;
  deadline_alarm& operator=(const deadline_alarm&) = delete;

  /// false with errno set when the alarm cannot be made.
  bool open();
  /// Wakes the loop at `wake`, or never.
  void arm(std::optional<std::int64_t> wake);
  /// The descriptor poll watches for it; -1 when poll's timeout does the waking.
  int fd() const { return fd_; }
  /// The timeout for poll: -1 when fd() wakes the loop or nothing is armed.
  int poll_timeout_ms() const;
  /// Whether the alarm went off, given what poll said of fd(); clears its readiness.
  bool fired(short revents);

 private:
  int fd_ = -1;
  std::optional<std::int64_t> wake_;
};

}  // namespace s3lect::guardian
