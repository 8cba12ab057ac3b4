// Timers on the elector's clock seam (manual_clock.hpp): the real timer in production, a
// manual_timer when a test installed a manual clock on the execution context.
#pragma once

#include "manual_clock.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

namespace s3lect::inline v1::detail {

/// A one-shot timer on a manual_clock, with boot_timer's semantics: a wait succeeds once the
/// clock reaches expiry(); cancel(), expires_at() and the destructor complete pending waits
/// with operation_aborted; per-operation cancellation (any type) aborts that wait alone.
class manual_timer {
 public:
  using wait_signature = void(boost::system::error_code);

  manual_timer(const boost::asio::any_io_executor& executor, manual_clock& clock);
  ~manual_timer();
  manual_timer(const manual_timer&) = delete;
  manual_timer& operator=(const manual_timer&) = delete;

  boot_clock::time_point expiry() const;
  void expires_at(boot_clock::time_point expiry);
  /// expires_at(now + delay), saturating at time_point::max().
  void expires_after(boot_clock::duration delay);
  void cancel();

  /// Completes with `void(error_code)`: success once the clock reached the expiry,
  /// operation_aborted after cancel(), expires_at(), destruction or a cancellation.
  template <class WaitToken>
  auto async_wait(WaitToken&& token) {
    return boost::asio::async_compose<WaitToken, wait_signature>(
        wait_op{state_, clock_, generation_}, token, state_->parked);
  }

 private:
  /// One wait: parked on the real timer until the clock fires it (or it is due already).
  struct wait_op {
    std::shared_ptr<manual_timer_state> state;
    manual_clock* clock;
    std::uint64_t generation;

    template <class Self>
    void operator()(Self& self) {
      self.reset_cancellation_state(boost::asio::enable_total_cancellation());
      // Already due: completes through the executor, never inside async_wait.
      if (clock->due(*state)) {
        const boost::asio::any_io_executor executor = state->parked.get_executor();
        boost::asio::post(executor,
                          boost::asio::append(std::move(self), boost::system::error_code{}));
        return;
      }
      const std::shared_ptr<manual_timer_state> timer = state;  // `self` owns this object.
      timer->parked.async_wait(std::move(self));
    }

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec) {
      const bool fired =
          ec == boost::asio::error::operation_aborted && clock->fired(*state, generation);
      self.complete(fired ? boost::system::error_code{} : ec);
    }
  };

  manual_clock* clock_;
  std::shared_ptr<manual_timer_state> state_;
  std::uint64_t generation_ = 0;
};

/// `RealTimer` (boot_timer, or an Asio timer for short timeouts), or a manual_timer when the
/// executor's context has a manual clock. Deadlines are on boot_clock. In production this costs
/// a branch per call and the variant's tag: no allocation, no virtual call.
template <class RealTimer>
class clock_timer {
 public:
  clock_timer(const boost::asio::any_io_executor& executor, clock_source clock) {
    if (clock.manual()) {
      timer_.template emplace<manual_timer>(executor, *clock.manual());
    } else {
      timer_.template emplace<RealTimer>(executor);
    }
  }
  /// Looks for the manual clock on the executor's context: one uncontended mutex lock, which a
  /// retry's pause timer pays once per storage operation.
  explicit clock_timer(const boost::asio::any_io_executor& executor)
      : clock_timer(executor, clock_source::of(executor)) {}

  void expires_at(boot_clock::time_point expiry) {
    if (auto* manual = std::get_if<manual_timer>(&timer_)) return manual->expires_at(expiry);
    RealTimer& real = std::get<RealTimer>(timer_);
    if constexpr (std::is_same_v<typename RealTimer::clock_type, boot_clock>) {
      real.expires_at(expiry);
    } else {
      // Another clock: the time left, from this same instant (saturating like Asio's timers).
      real.expires_after(expiry - boot_clock::now());
    }
  }
  void expires_after(boot_clock::duration delay) {
    if (auto* manual = std::get_if<manual_timer>(&timer_)) return manual->expires_after(delay);
    std::get<RealTimer>(timer_).expires_after(delay);
  }
  void cancel() {
    if (auto* manual = std::get_if<manual_timer>(&timer_)) return manual->cancel();
    std::get<RealTimer>(timer_).cancel();
  }

  /// Completes with `void(error_code)`, as RealTimer::async_wait.
  template <class WaitToken>
  auto async_wait(WaitToken&& token) {
    if (auto* manual = std::get_if<manual_timer>(&timer_)) {
      return manual->async_wait(std::forward<WaitToken>(token));
    }
    return std::get<RealTimer>(timer_).async_wait(std::forward<WaitToken>(token));
  }

 private:
  std::variant<std::monostate, RealTimer, manual_timer> timer_;
};

}  // namespace s3lect::inline v1::detail
