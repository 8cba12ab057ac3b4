// How far this node's wall clock is from the S3 store's, estimated from the Date header of the
// store's answers (the htpdate technique), without I/O and without reading any clock.
//
// Model. Let k = store clock − boot_clock. A request sent at boot time `sent` and processed at
// `received` (≥ the true receipt) got its Date at some moment c in [sent, received], with the
// store's time at c in [date, date + 1 s) (Date is truncated to whole seconds). So
//   date − received < k < date + 1 s − sent,
// an interval of width round trip + 1 s. Samples taken at different phases of the store's second
// catch Date ticking over at different moments, so intersecting their intervals narrows k towards
// one round trip (a short round trip gives a narrow interval: "minimum over round trips" falls
// out of the intersection). The estimate of k is the midpoint of the intersection and its error
// bound is half its width. Then the store's time now is boot_now + k and the wall-clock offset is
// that minus the local wall clock. Holding k against boot_clock, not the wall clock, means a
// step of the local wall clock changes the offset at once and invalidates no sample.
//
// k is constant up to drift, so each sample's interval is widened by 100 ppm of its age
// (measured from its `sent`) before intersecting. The newest 64 samples of the last 15 minutes
// are kept. A store clock step, a pause that boot_clock does not count, or front ends that
// disagree make samples contradict each other (an empty intersection): the estimator keeps the
// longest run of newest samples that still agree and drops the older ones, so a step is absorbed
// after one sample. A step smaller than the current uncertainty contradicts nothing and goes
// unnoticed; until later samples narrow onto the new k, the bound may miss the truth by up to
// that step.
//
// A store that rounds Date to the nearest second looks exactly like a truncating store whose
// clock is 0.5 s ahead: its samples stay consistent and the estimate is 0.5 s ahead of its true
// clock, outside the reported bound. A store whose front ends mix both reports contradictions
// now and then; the bound then falls back to at most about 0.5 s + half a round trip.
//
// Random request phases narrow the bound slowly: with n samples the intersection is about
// 2/(n + 1) s wide plus a round trip (a bound of 6 to 35 ms with 64 samples, by the phases), and
// a caller whose requests are a whole number of seconds apart keeps hitting the same phase and
// gains nothing. Sending
// at next_probe_time() bisects the interval instead and reaches a few round trips within about
// ten samples.
#pragma once

#include "boot_clock.hpp"

#include <s3lect/storage.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace s3lect::inline v1::detail {

/// The store's clock relative to this node's wall clock.
struct clock_offset_estimate {
  /// Store clock − local wall clock: positive when the store is ahead of this node.
  std::chrono::microseconds offset;
  /// |true offset − offset| ≤ error_bound, given the model above.
  std::chrono::microseconds error_bound;
  /// How many samples agreed on the estimate.
  std::size_t samples;
};

/// What add_sample() did with a sample.
enum class clock_sample_outcome {
  /// It agreed with every kept sample (or was the first).
  consistent,
  /// It contradicted older samples, which were dropped: the store's clock stepped, boot_clock
  /// missed a pause, or the store's front ends disagree. Worth a log line.
  contradicted_older,
  /// Unusable (received before sent, or a round trip over max_round_trip); nothing changed.
  rejected,
};

/// Estimates the store's clock from (sent, received, Date) samples. Sans-I/O: every time is a
/// parameter. Not thread-safe: the caller serialises.
class clock_offset_estimator {
 public:
  static constexpr std::size_t max_samples = 64;
  static constexpr std::chrono::minutes max_sample_age{15};
  static constexpr std::chrono::seconds max_round_trip{60};
  /// Assumed worst relative drift between the store's clock and boot_clock.
  static constexpr std::int64_t max_drift_ppm = 100;
  /// How far a store's Date may lag its clock (a coarse clock: a kernel tick at HZ = 100).
  static constexpr std::chrono::milliseconds max_date_lag{10};

  /// Records one answer: `sent` just before the request started, `received` when the answer was
  /// processed, `date` its Date header (whole seconds; a fraction is ignored). Drops the samples
  /// received more than max_sample_age before it, those beyond max_samples, and those that
  /// contradict it.
  clock_sample_outcome add_sample(boot_clock::time_point sent, boot_clock::time_point received,
                                  std::chrono::system_clock::time_point date);

  /// The store's clock relative to `wall_now`, as of `boot_now`; nullopt before the first sample.
  /// The bound grows by max_drift_ppm of the time since the samples.
  std::optional<clock_offset_estimate> estimate(
      boot_clock::time_point boot_now, std::chrono::system_clock::time_point wall_now) const;

  /// The store's time at `boot_now` (the midpoint estimate); nullopt before the first sample.
  std::optional<std::chrono::system_clock::time_point> store_time(
      boot_clock::time_point boot_now) const;

  /// The first send time at or after `earliest` at which the store's Date is expected to tick
  /// over while it handles the request (half the shortest kept round trip after sending), so
  /// that the answer halves the uncertainty; nullopt before the first sample. Any other send
  /// time gives a valid sample too, only a less informative one.
  std::optional<boot_clock::time_point> next_probe_time(boot_clock::time_point earliest) const;

 private:
  /// Bounds on k = store clock − boot_clock, in nanoseconds since the respective epochs.
  struct offset_interval {
    std::chrono::nanoseconds low;
    std::chrono::nanoseconds high;
  };
  struct sample {
    boot_clock::time_point sent;
    boot_clock::time_point received;
    offset_interval offset;
  };

  /// The intersection of all kept samples, each widened for drift up to `at` (or up to the
  /// newest sample, if later). Never empty while there are samples.
  std::optional<offset_interval> intersection(boot_clock::time_point at) const;

  std::deque<sample> samples_;  // oldest first
};

}  // namespace s3lect::inline v1::detail
