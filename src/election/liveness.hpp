// The liveness check without I/O: what the publisher knows, "now" and the limits in, the report
// out, so that tests can move time by hand.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/liveness.hpp>

#include "boot_clock.hpp"

#include <optional>

namespace s3lect::inline v1::detail {

/// What the elector's liveness depends on, read together under the publisher's mutex.
struct liveness_facts {
  bool running = false;
  /// A leadership is published, and the deadline by which it must be renewed or given up.
  std::optional<boot_clock::time_point> leadership_deadline;
  /// When the loop last ran: started, or performed a step of the core.
  std::optional<boot_clock::time_point> loop_last_ran;
  /// At least one election cycle completed, and how many storage (or peer) operations have
  /// failed in a row since the last success.
  bool cycle_completed = false;
  unsigned consecutive_failures = 0;
};

/// `limits` with a zero max_loop_stall replaced by its default for `config`.
liveness_limits resolved_limits(liveness_limits limits, const elector_config& config);

/// The report for `facts` at `now`, under resolved `limits`.
liveness_report assess_liveness(const liveness_facts& facts, boot_clock::time_point now,
                                const liveness_limits& limits);

}  // namespace s3lect::inline v1::detail
