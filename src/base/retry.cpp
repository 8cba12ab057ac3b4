#include "s3lect/retry.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace s3lect::inline v1 {
namespace {

using std::chrono::milliseconds;

// Adds two non-negative durations, saturating: a worst case that overflows is "forever".
milliseconds saturating_add(milliseconds a, milliseconds b) {
  if (b > milliseconds::max() - a) return milliseconds::max();
  return a + b;
}

}  // namespace

milliseconds retry_policy::worst_case(milliseconds attempt_timeout) const {
  if (attempt_timeout <= milliseconds::zero()) return milliseconds::max();
  milliseconds total = attempt_timeout;
  for (const milliseconds delay : delays) {
    // Negative delays are invalid (validate() says so); they count as no delay here.
    total = saturating_add(total, std::max(delay, milliseconds::zero()));
    total = saturating_add(total, attempt_timeout);
  }
  return total;
}

std::optional<std::string> retry_policy::validate() const {
  for (std::size_t i = 0; i < delays.size(); ++i) {
    if (delays[i] < milliseconds::zero()) {
      return "delays[" + std::to_string(i) + "]: must not be negative, is " +
             std::to_string(delays[i].count()) + " ms";
    }
  }
  return std::nullopt;
}

retry_schedule::retry_schedule(retry_policy policy) : delays_(std::move(policy.delays)) {}

std::optional<milliseconds> retry_schedule::after_failure(const boost::system::error_code& ec) {
  return after_failure(ec, is_transient(ec));
}

std::optional<milliseconds> retry_schedule::after_failure(const boost::system::error_code& ec,
                                                          bool retryable) {
  const bool abandoned = ec == boost::asio::error::operation_aborted || ec == errc::stopped;
  const auto retries_done = static_cast<std::size_t>(attempts_ - 1);
  if (gave_up_ || !retryable || abandoned || retries_done >= delays_.size()) {
    gave_up_ = true;
    return std::nullopt;
  }
  ++attempts_;
  return std::max(delays_[retries_done], milliseconds::zero());
}

}  // namespace s3lect::inline v1
