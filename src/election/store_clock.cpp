#include "store_clock.hpp"

#include <cstdio>

namespace s3lect::inline v1::detail {
namespace {

std::string in_seconds(std::chrono::microseconds us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fs", static_cast<double>(us.count()) / 1e6);
  return text;
}

std::string describe_estimate(const clock_offset_estimate& estimate) {
  return "offset=" + in_seconds(estimate.offset) + " bound=" + in_seconds(estimate.error_bound);
}

}  // namespace

store_clock::noted store_clock::note_date(boot_clock::time_point sent,
                                          std::chrono::system_clock::time_point date,
                                          std::optional<std::chrono::milliseconds> max_clock_skew) {
  const auto received = clock_.now();
  noted out;
  const std::lock_guard lock(mutex_);
  const clock_sample_outcome outcome = estimator_.add_sample(sent, received, date);
  const auto estimate = estimator_.estimate(received, clock_.wall_now());
  if (!estimate) return out;
  // Each answer to a request sent at the probe time halves the uncertainty.
  if (estimate->error_bound > fine_bound) out.probe = estimator_.next_probe_time(received);
  if (outcome == clock_sample_outcome::contradicted_older) {
    out.lines.emplace_back(log_level::warning,
                           "store clock estimate restarted: an answer's Date disagreed with the "
                           "earlier ones (a clock stepped) " +
                               describe_estimate(*estimate));
  }
  if (!max_clock_skew) return out;
  // Certainly off, not possibly: a first answer's bound is half a second, more than half of a
  // small max_clock_skew, and a right clock must not be reported wrong.
  const bool far = std::chrono::abs(estimate->offset) - estimate->error_bound > *max_clock_skew / 2;
  if (far && !warned_) {
    out.lines.emplace_back(
        log_level::warning,
        "system clock is off the store's clock by more than half of max_clock_skew " +
            describe_estimate(*estimate));
  } else if (!far && warned_) {
    out.lines.emplace_back(log_level::info, "system clock agrees with the store's again " +
                                                describe_estimate(*estimate));
  }
  warned_ = far;
  return out;
}

std::chrono::system_clock::time_point store_clock::store_now(
    boot_clock::time_point boot_now) const {
  std::optional<std::chrono::system_clock::time_point> time;
  {
    const std::lock_guard lock(mutex_);
    time = estimator_.store_time(boot_now);
  }
  return time.value_or(clock_.wall_now());
}

std::optional<store_clock_offset> store_clock::offset() const {
  const std::lock_guard lock(mutex_);
  const auto estimate = estimator_.estimate(clock_.now(), clock_.wall_now());
  if (!estimate) return std::nullopt;
  return store_clock_offset{estimate->offset, estimate->error_bound};
}

std::string store_clock::describe() const {
  const std::lock_guard lock(mutex_);
  const auto estimate = estimator_.estimate(clock_.now(), clock_.wall_now());
  return estimate ? describe_estimate(*estimate) : "offset=unknown";
}

}  // namespace s3lect::inline v1::detail
