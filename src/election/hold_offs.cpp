#include "hold_offs.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {

using std::chrono::milliseconds;

milliseconds resign_hold_off(const elector_config& config) {
  return config.frequent_interval * 2;
}

milliseconds acquire_hook_backoff::after_failure(const elector_config& config) {
  ++failures_;
  milliseconds hold_off = config.frequent_interval;
  for (unsigned i = 1; i < failures_ && hold_off < config.infrequent_interval; ++i) {
    hold_off *= 2;
  }
  return std::min(hold_off, std::max(config.infrequent_interval, config.frequent_interval));
}

}  // namespace s3lect::inline v1::detail
