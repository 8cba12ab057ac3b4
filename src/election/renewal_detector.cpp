#include "renewal_detector.hpp"

namespace s3lect::inline v1::detail {

bool renewal_detector::renewed(std::optional<boot_clock::time_point> last_renewal,
                               bool core_leading, std::uint64_t published_period) {
  if (last_renewal == last_seen_) return false;
  // A write of ours landed: the acquisition of a period (counted when reported) or a renewal
  // within the period already seen writing.
  const bool renewal =
      last_renewal && core_leading && published_period != 0 && published_period == period_seen_;
  last_seen_ = last_renewal;
  period_seen_ = published_period;
  return renewal;
}

}  // namespace s3lect::inline v1::detail
