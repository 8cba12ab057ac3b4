// Which of our writes renewed a published leadership: a sans-I/O rule for the counters and the
// health endpoint's serial, kept beside the core so that unit tests check it directly.
#pragma once

#include "boot_clock.hpp"

#include <cstdint>
#include <optional>

namespace s3lect::inline v1::detail {

/// Fed after every step of the core with when our last successful write was sent (core_status's
/// last_renewal), tells whether a write landed since the previous call that renews the
/// published leadership: not the acquisition of a period, and not a write before the period was
/// published (acquire grace, a running on_acquire hook) or the first one seen after it.
class renewal_detector {
 public:
  /// `last_renewal`: the core's; `core_leading`: election_core::is_leader(); `published_period`:
  /// the period of the published lease, 0 when none is published.
  bool renewed(std::optional<boot_clock::time_point> last_renewal, bool core_leading,
               std::uint64_t published_period);

 private:
  std::optional<boot_clock::time_point> last_seen_;
  std::uint64_t period_seen_ = 0;  // The published period when the last write was seen.
};

}  // namespace s3lect::inline v1::detail
