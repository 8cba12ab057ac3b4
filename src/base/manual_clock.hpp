// The elector's clock seam: "now" and timed waits come from the real clocks by default, or from a
// manual clock that a test installs on the io_context and moves forward by hand.
//
// The election core already takes "now" as an argument; the coroutine layer around it reads the
// clock and waits on timers. Every such read goes through clock_source and every such wait
// through clock_timer (clock_timer.hpp), which look for a manual_clock service on their
// execution context: none (production) means boot_clock, the system clock and the real timer;
// one means the manual clock's time and waits that complete only when a test advances it. As
// boostorg/mysql and redis test their sans-I/O parts, but one level up: the io_context still runs
// every handler, only time stands still between advances.
#pragma once

#include "boot_clock.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace s3lect::inline v1::detail {

struct manual_timer_state;

/// A clock that moves only when advance() or advance_to() is called: the elector's time in unit
/// tests. An Asio service of the io_context it is installed on; thread-safe.
class manual_clock final : public boost::asio::execution_context::service {
 public:
  using key_type = manual_clock;
  static inline boost::asio::execution_context::id id;

  /// Starts at boot_clock's and the system clock's present readings, so that stamps compare
  /// sensibly with real wall-clock times written by a test (a record an hour old).
  explicit manual_clock(boost::asio::execution_context& context);

  /// The manual clock of `context`, installed on first use. Install it before constructing the
  /// objects that should follow it: they look for it once, when built.
  static manual_clock& install(boost::asio::execution_context& context);
  /// The manual clock of the executor's context, or nullptr when none is installed (real time).
  static manual_clock* of(const boost::asio::any_io_executor& executor);

  boot_clock::time_point now() const;
  /// The wall clock: the system clock's reading at install, moved on as now() is.
  std::chrono::system_clock::time_point wall_now() const;

  /// Moves the clock to `when` (never backwards) and completes, through their executors, every
  /// wait whose expiry is then reached.
  void advance_to(boot_clock::time_point when);
  void advance(boot_clock::duration by);
  /// The earliest expiry of a timer that is still ahead of now(), if any.
  std::optional<boot_clock::time_point> next_expiry() const;

  // For manual_timer.
  void add(manual_timer_state* timer);
  void remove(manual_timer_state* timer);
  /// Sets the timer's expiry; returns the timer's new generation (pending waits are aborted).
  std::uint64_t set_expiry(manual_timer_state& timer, boot_clock::time_point expiry);
  bool due(const manual_timer_state& timer) const;
  /// True when the clock fired the timer at `generation` (its waits then succeed).
  bool fired(const manual_timer_state& timer, std::uint64_t generation) const;

 private:
  void shutdown() override {}

  mutable std::mutex mutex_;
  boot_clock::time_point now_;
  const boot_clock::time_point boot_origin_;
  const std::chrono::system_clock::time_point wall_origin_;
  std::set<manual_timer_state*> timers_;
};

/// What a manual timer shares with its pending waits. Waits park on a real timer that never
/// expires; the clock cancels it when the expiry is reached, and a wait that sees its own
/// generation fired reports success instead of the cancellation.
struct manual_timer_state : std::enable_shared_from_this<manual_timer_state> {
  explicit manual_timer_state(const boost::asio::any_io_executor& executor) : parked(executor) {
    parked.expires_at(std::chrono::steady_clock::time_point::max());
  }

  boost::asio::steady_timer parked;
  // The fields below change under the clock's mutex.
  boot_clock::time_point expiry{};
  std::uint64_t generation = 0;
  std::uint64_t fired_generation = 0;
};

/// "Now" for the elector's parts: the real clocks, or the manual clock when one is installed.
/// A copyable pointer: reading it costs one well-predicted branch.
class clock_source {
 public:
  clock_source() = default;
  explicit clock_source(manual_clock* manual) : manual_(manual) {}
  /// The source for objects running on `executor` (looks for the service once).
  static clock_source of(const boost::asio::any_io_executor& executor) {
    return clock_source(manual_clock::of(executor));
  }

  boot_clock::time_point now() const { return manual_ ? manual_->now() : boot_clock::now(); }
  std::chrono::system_clock::time_point wall_now() const {
    return manual_ ? manual_->wall_now() : std::chrono::system_clock::now();
  }
  manual_clock* manual() const { return manual_; }

 private:
  manual_clock* manual_ = nullptr;
};

}  // namespace s3lect::inline v1::detail
