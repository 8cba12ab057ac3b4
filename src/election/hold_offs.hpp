// How long the elector stays out of the competition after giving leadership up: decisions of
// the sans-I/O kind, kept out of the coroutine layer so that unit tests check them directly.
#pragma once

#include <s3lect/config.hpp>

#include <chrono>

namespace s3lect::inline v1::detail {

/// After resign(): two frequent intervals, so that followers, which read every F, see the
/// released record and one of them takes over before this elector competes again.
std::chrono::milliseconds resign_hold_off(const elector_config& config);

/// The hold-off after failed on_acquire hooks: F after the first failure, doubling with every
/// consecutive failure up to max(I, F), so that a broken hook does not spin (the Go package
/// re-ran it every 5 s). A success starts the count again.
class acquire_hook_backoff {
 public:
  /// Counts a failure; returns how long to hold off before competing again.
  std::chrono::milliseconds after_failure(const elector_config& config);
  /// Counts a success: the next failure holds off for F again.
  void after_success() noexcept { failures_ = 0; }
  /// Consecutive failures so far.
  unsigned failures() const noexcept { return failures_; }

 private:
  unsigned failures_ = 0;
};

}  // namespace s3lect::inline v1::detail
