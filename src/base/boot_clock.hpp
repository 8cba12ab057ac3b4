// A monotonic clock that keeps counting while the machine sleeps or the VM is paused
// (CLOCK_BOOTTIME on Linux). Leadership deadlines are measured on it: std::chrono::steady_clock
// (CLOCK_MONOTONIC) stops during a suspend, so a leader that wakes after the lease would still
// believe it leads while a follower, whose clock did not stop, has already taken over. On other
// systems it is CLOCK_MONOTONIC (platform.hpp; docs/operations.md, Other systems).
#pragma once

#include "platform.hpp"

#include <chrono>
#include <ctime>

namespace s3lect::inline v1::detail {

/// A Clock (in the std::chrono sense, usable with asio::basic_waitable_timer) on boot_clock_id:
/// CLOCK_BOOTTIME on Linux.
struct boot_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<boot_clock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec ts{};
    // Cannot fail: CLOCK_BOOTTIME exists since Linux 2.6.39, CLOCK_MONOTONIC everywhere, and
    // the pointer is valid.
    ::clock_gettime(boot_clock_id, &ts);
    return time_point{std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec}};
  }
};

}  // namespace s3lect::inline v1::detail
