// Preloaded ahead of libfaketime for the clock-fault node of tests/chaos/chaos.sh (docs/chaos.md):
// timer file descriptors go straight to the kernel.
//
// libfaketime 0.9.10 (Debian 12) shifts every TFD_TIMER_ABSTIME expiry by the faked wall-clock
// offset, even on a CLOCK_MONOTONIC or CLOCK_BOOTTIME timer fd and with
// FAKETIME_DONT_FAKE_MONOTONIC=1. Asio's epoll reactor arms its timer fd with an absolute 1 ns
// when a timer is already due: with the clock 5 minutes ahead that becomes -300 s, the kernel
// refuses it (EINVAL), and the due timer waits for whatever the fd was armed with before. That
// would stall the node's event loop, a fault of the harness rather than the wall-clock fault
// under test. Only the wall clock is to be wrong, so these two calls are the kernel's own. (An
// absolute CLOCK_REALTIME timer fd would now be off by the offset; s3lect has none: Asio keeps
// its timers on one CLOCK_MONOTONIC fd, armed relative except for that 1 ns, and the elector's
// CLOCK_BOOTTIME boot_timer arms relative, so that it needs no shim under libfaketime.)
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

int timerfd_settime(int fd, int flags, const struct itimerspec* new_value,
                    struct itimerspec* old_value) {
  return (int)syscall(SYS_timerfd_settime, fd, flags, new_value, old_value);
}

int timerfd_gettime(int fd, struct itimerspec* current_value) {
  return (int)syscall(SYS_timerfd_gettime, fd, current_value);
}
