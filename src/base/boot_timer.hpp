// A waitable timer on CLOCK_BOOTTIME (boot_clock) whose waits end on time across a suspend.
//
// asio::basic_waitable_timer<boot_clock> reads its expiry on boot_clock but sleeps on the epoll
// reactor's one timerfd, which is on CLOCK_MONOTONIC. That clock stops while the machine is
// suspended, so after a resume such a wait fires late by as much as the time that was left when
// the machine went to sleep: a leader learns of its lost lease up to a renew deadline late, while
// another node may already lead. boot_timer sleeps on a timerfd of its own, on CLOCK_BOOTTIME,
// which counts the suspend: on resume the kernel sees the timer has expired and the wait
// completes at once. (It is armed with the time left rather than an absolute expiry, which
// libfaketime would shift: see arm() in boot_timer.cpp.)
//
// It keeps basic_waitable_timer's member names and its semantics where they can be kept, so the
// elector switches with a one-line change. Like Asio's timers it is not thread-safe: call it,
// and let its waits run, on one strand (or a single-threaded io_context).
//
// Checking a real suspend by hand (CI cannot suspend): on a test machine, arm a boot_timer and
// an asio::basic_waitable_timer<boot_clock> for now + 60 s, wait on both, print
// boot_clock::now() - expiry() when each completes, then run `sudo rtcwake -m mem -s 120`
// (suspend to RAM, woken by the RTC after 120 s; `systemctl suspend` plus a key press works too).
// Expected: the boot_timer completes within about a second of the resume, lateness ≈ 60 s (all
// of it asleep); the basic_waitable_timer completes about 60 s after the resume (lateness
// ≈ 120 s). For the elector: a leader suspended past its renew deadline reports the loss right on
// resume, and `s3lect run` kills its command then. A VM pause (virsh suspend) may freeze both
// clocks in the guest, hiding the gap from both timers; use a guest suspend
// (`virsh dompmsuspend <domain> mem`, then `virsh dompmwakeup <domain>`) to see it.
#pragma once

#include "boot_clock.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace s3lect::inline v1::detail {

struct boot_timer_state;

/// A one-shot timer on boot_clock (CLOCK_BOOTTIME), an Asio I/O object. A wait succeeds only
/// when boot_clock::now() >= expiry(); cancel(), expires_at() and the destructor complete every
/// pending wait with operation_aborted, even one whose wake-up is already queued.
class boot_timer {
 public:
  using executor_type = boost::asio::any_io_executor;
  using clock_type = boot_clock;
  using duration = boot_clock::duration;
  using time_point = boot_clock::time_point;
  using wait_signature = void(boost::system::error_code);

  /// A timer that has expired (expiry() is the clock's epoch, as with Asio's timers). Throws
  /// boost::system::system_error when the timerfd cannot be created or registered.
  explicit boot_timer(executor_type executor);
  /// The same on `context.get_executor()`.
  template <class ExecutionContext>
  requires std::is_convertible_v<ExecutionContext&, boost::asio::execution_context&>
  explicit boot_timer(ExecutionContext& context) : boot_timer(context.get_executor()) {}
  /// Closes the timerfd; pending waits complete with operation_aborted.
  ~boot_timer();
  boot_timer(const boot_timer&) = delete;
  boot_timer& operator=(const boot_timer&) = delete;

  /// The executor given at construction.
  executor_type get_executor() const noexcept;

  /// The time at which the timer expires; time_point::max() never expires.
  time_point expiry() const noexcept;

  /// Sets the expiry (a time already passed: due at once; time_point::max(): never) and
  /// completes pending waits with operation_aborted, as basic_waitable_timer does. Throws
  /// boost::system::system_error if the kernel refuses the timerfd setting.
  void expires_at(time_point expiry_time);
  /// expires_at(now + delay), saturating at time_point::max().
  void expires_after(duration delay);

  /// Completes pending waits with operation_aborted. Waits started afterwards wait normally.
  void cancel();

  /// Waits until boot_clock::now() >= expiry(); never completes inside this call. Completes
  /// with `void(error_code)`: success at or after the expiry, operation_aborted after cancel(),
  /// expires_at() or destruction. Any number of waits may be pending. Cancellation: terminal,
  /// partial and total (a wait has no side effect) complete this wait alone with
  /// operation_aborted; the timer stays usable.
  template <class WaitToken>
  auto async_wait(WaitToken&& token) {
    return boost::asio::async_initiate<WaitToken, wait_signature>(initiate_wait{this}, token);
  }

 private:
  void wait_impl(boost::asio::any_completion_handler<wait_signature> handler);

  struct initiate_wait {
    boot_timer* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->wait_impl(
          boost::asio::any_completion_handler<wait_signature>(std::forward<Handler>(handler)));
    }
  };

  // Shared with pending waits: a wait queued when the timer is destroyed still finds it.
  std::shared_ptr<boot_timer_state> state_;
};

}  // namespace s3lect::inline v1::detail
