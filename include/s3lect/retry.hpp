// The retry policy every network operation runs under (docs/configuration.md, `retry`): attempt at
// once, then after 100 ms, then after 1 s, then give up and let the caller decide. Only transient
// failures are retried. The schedule is a sans-I/O class; async_retry is the coroutine that
// performs it.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <concepts>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace s3lect::inline v1 {

/// How often and how patiently an operation is retried. An aggregate: set the fields, then
/// validate().
struct retry_policy {
  /// Delays before the 2nd, 3rd, … attempt. The first attempt is always immediate; after the
  /// last delay's attempt fails, the policy gives up. Empty: a single attempt.
  std::vector<std::chrono::milliseconds> delays{std::chrono::milliseconds{100},
                                                std::chrono::milliseconds{1000}};

  /// The longest a whole retried operation can take: every attempt running into
  /// `attempt_timeout` plus every delay. An `attempt_timeout` of zero means attempts are
  /// unbounded, and so is the result: milliseconds::max(). Saturates instead of overflowing.
  std::chrono::milliseconds worst_case(std::chrono::milliseconds attempt_timeout) const;

  /// Returns nullopt when valid, else "delays[i]: what is wrong" naming the first bad entry.
  std::optional<std::string> validate() const;
};

/// The retry policy as a sans-I/O state machine: report each failure, get back the delay before
/// the next attempt or nullopt to give up. No clock, no timers; unit-testable without sleeping.
class retry_schedule {
 public:
  /// A schedule that has made its first attempt: attempts() == 1.
  explicit retry_schedule(retry_policy policy);

  /// After a failed attempt: the delay before the next one, or nullopt to give up. Retries
  /// exactly the errors s3lect::is_transient accepts.
  std::optional<std::chrono::milliseconds> after_failure(const boost::system::error_code& ec);

  /// Same, with the caller deciding whether `ec` is worth retrying. Cancellation
  /// (asio::error::operation_aborted) and errc::stopped give up whatever `retryable` says:
  /// retrying them would resurrect work the caller abandoned or touch a destroyed object.
  std::optional<std::chrono::milliseconds> after_failure(const boost::system::error_code& ec,
                                                         bool retryable);

  /// Attempts allowed so far, the first included: 1 before any failure is reported.
  int attempts() const noexcept { return attempts_; }

  /// True once after_failure() has returned nullopt; every later call returns nullopt too.
  bool gave_up() const noexcept { return gave_up_; }

 private:
  std::vector<std::chrono::milliseconds> delays_;
  int attempts_ = 1;
  bool gave_up_ = false;
};

/// The default retry predicate: s3lect::is_transient.
struct transient_errors {
  /// is_transient(ec).
  bool operator()(const boost::system::error_code& ec) const noexcept { return is_transient(ec); }
};

namespace detail {

template <class Awaitable>
struct attempt_traits {
  static constexpr bool valid = false;
};

template <class T>
struct attempt_traits<boost::asio::awaitable<std::tuple<boost::system::error_code, T>>> {
  static constexpr bool valid = true;
  using result = std::tuple<boost::system::error_code, T>;
};

}  // namespace detail

/// A callable that starts one attempt: `op()` returns
/// `boost::asio::awaitable<std::tuple<boost::system::error_code, T>>`, e.g. an operation started
/// with the `as_tuple(use_awaitable)` token.
template <class Op>
concept retryable_operation =
    std::invocable<Op&> && detail::attempt_traits<std::invoke_result_t<Op&>>::valid;

/// The tuple an attempt of `Op` yields: `std::tuple<boost::system::error_code, T>`.
template <retryable_operation Op>
using attempt_result_t = typename detail::attempt_traits<std::invoke_result_t<Op&>>::result;

/// Runs `op` under `policy`: calls it, and after each failure `retryable` accepts, sleeps the
/// next delay (a steady_timer on the current coroutine's executor) and calls it again. Completes
/// with the last attempt's `(error_code, T)`: success, the error that was not retryable, or the
/// last error when the policy gave up. Never throws for an attempt's error.
/// Cancellation: a terminal cancellation of the awaiting coroutine is passed to the running
/// attempt, and interrupts a delay; either way no further attempt starts and the result's
/// error_code is asio::error::operation_aborted (with the last attempt's T).
///
/// GCC 12 rule (PR 100611): name the callable *before* the co_await expression, never write a
/// lambda inside it, and let the lambda start the operation with its data as parameters of the
/// operation (or of a coroutine), not as references into a frame that may be gone:
///
///     auto read = [&store, key] { return store.async_get(key, as_tuple(use_awaitable)); };
///     auto [ec, got] = co_await s3lect::async_retry(policy, read);
///
/// `op` and `retryable` are copied into the coroutine frame and live until it completes.
/// `PauseTimer` (constructible from the executor) times the delays; the elector passes one on its
/// clock seam, which its unit tests run on a manual clock.
template <retryable_operation Op,
          std::predicate<const boost::system::error_code&> Retryable = transient_errors,
          class PauseTimer = boost::asio::steady_timer>
boost::asio::awaitable<attempt_result_t<Op>> async_retry(retry_policy policy, Op op,
                                                         Retryable retryable = {}) {
  namespace asio = boost::asio;
  retry_schedule schedule(std::move(policy));
  PauseTimer timer(co_await asio::this_coro::executor);
  for (;;) {
    attempt_result_t<Op> result = co_await op();
    const boost::system::error_code ec = std::get<0>(result);
    if (!ec) co_return result;
    const bool retry = retryable(ec);
    const std::optional<std::chrono::milliseconds> delay = schedule.after_failure(ec, retry);
    if (!delay) co_return result;
    // An attempt that ignored a cancellation must not earn another attempt; and co_await would
    // throw once the state is cancelled, while this function reports errors as values.
    const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) {
      std::get<0>(result) = asio::error::operation_aborted;
      co_return result;
    }
    timer.expires_after(*delay);
    auto wait_token = asio::as_tuple(asio::use_awaitable);
    const auto [wait_ec] = co_await timer.async_wait(wait_token);
    // A cancellation may also land after the timer fired but before this coroutine resumed.
    const asio::cancellation_state after_wait = co_await asio::this_coro::cancellation_state;
    if (wait_ec || after_wait.cancelled() != asio::cancellation_type::none) {
      std::get<0>(result) = asio::error::operation_aborted;
      co_return result;
    }
  }
}

}  // namespace s3lect::inline v1
