// What an elector knows of the store's clock: the offset estimate from the Date of the store's
// answers, the log lines it deserves, and the store's time for stamping lastUpdated. No election
// decision depends on it. Thread-safe: samples come from the elector's strand, status() reads
// from any thread.
#pragma once

#include "clock_offset.hpp"
#include "manual_clock.hpp"

#include <s3lect/logger.hpp>
#include <s3lect/storage.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

class store_clock {
 public:
  /// Reads time from `clock` (the elector's seam).
  explicit store_clock(clock_source clock) : clock_(clock) {}

  /// The error bound below which requests are no longer timed to measure the clock.
  static constexpr std::chrono::milliseconds fine_bound{50};

  /// What a new answer changed.
  struct noted {
    /// When to send requests so that their answers measure the clock finely (the store's second
    /// ticks over while it handles them), or nullopt once the bound is under fine_bound.
    std::optional<boot_clock::time_point> probe;
    /// Lines to log: the estimate restarted (a clock stepped), the offset became certainly
    /// (beyond its error bound) more than half of max_clock_skew, or stopped being so.
    std::vector<std::pair<log_level, std::string>> lines;
  };

  /// Records the `date` of an answer to a request sent at `sent` and processed now.
  noted note_date(boot_clock::time_point sent, std::chrono::system_clock::time_point date,
                  std::optional<std::chrono::milliseconds> max_clock_skew);

  /// The store's time at `boot_now` as best known: the local wall clock before the first answer.
  std::chrono::system_clock::time_point store_now(boot_clock::time_point boot_now) const;
  /// The store's clock minus this node's, or nullopt before the first answer with a Date.
  std::optional<store_clock_offset> offset() const;
  /// "offset=-300.012s bound=0.004s", or "offset=unknown".
  std::string describe() const;

 private:
  const clock_source clock_;
  mutable std::mutex mutex_;
  clock_offset_estimator estimator_;
  bool warned_ = false;  // the offset is past half of max_clock_skew, and was said
};

}  // namespace s3lect::inline v1::detail
