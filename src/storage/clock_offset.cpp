#include "clock_offset.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace s3lect::inline v1::detail {
namespace {

using std::chrono::nanoseconds;
using namespace std::chrono_literals;

// An integer ceiling division keeps the allowance exact and free of floating point.
constexpr std::int64_t parts_per_million = 1'000'000;
static_assert(parts_per_million % clock_offset_estimator::max_drift_ppm == 0);
constexpr std::int64_t drift_divisor = parts_per_million / clock_offset_estimator::max_drift_ppm;

/// How far k may have drifted over `age`, rounded up.
nanoseconds drift_allowance(nanoseconds age) {
  if (age <= nanoseconds::zero()) return nanoseconds::zero();
  return nanoseconds{(age.count() + drift_divisor - 1) / drift_divisor};
}

/// Half of `width`, rounded up: the distance from the (rounded down) midpoint to either end.
nanoseconds half_rounded_up(nanoseconds width) {
  return nanoseconds{width.count() / 2 + width.count() % 2};
}

}  // namespace

clock_sample_outcome clock_offset_estimator::add_sample(
    boot_clock::time_point sent, boot_clock::time_point received,
    std::chrono::system_clock::time_point date) {
  if (received < sent || received - sent > max_round_trip) return clock_sample_outcome::rejected;

  const nanoseconds date_since_epoch =
      std::chrono::floor<std::chrono::seconds>(date).time_since_epoch();
  // A store may read a coarse clock for its Date (one that lags by up to a kernel tick): the
  // local radosgw answered 17 of 3,000 requests with a Date up to 3 ms before the second in
  // which they were sent. Its clock may thus be up to max_date_lag past date + 1 s.
  samples_.push_back({sent,
                      received,
                      {date_since_epoch - received.time_since_epoch(),
                       date_since_epoch + 1s + max_date_lag - sent.time_since_epoch()}});
  // The new sample is never pruned: its age is zero and the deque holds at most one more.
  while (samples_.size() > max_samples || received - samples_.front().received > max_sample_age) {
    samples_.pop_front();
  }

  // Walk from the newest back; the first sample that would empty the intersection and every
  // older one describe a k that no longer holds.
  offset_interval run{nanoseconds::min(), nanoseconds::max()};
  std::size_t agreeing = 0;
  for (auto it = samples_.rbegin(); it != samples_.rend(); ++it) {
    const nanoseconds allowance = drift_allowance(received - it->sent);
    const nanoseconds low = std::max(run.low, it->offset.low - allowance);
    const nanoseconds high = std::min(run.high, it->offset.high + allowance);
    // The bounds are strict (k lies in the open interval), so low == high is already empty.
    if (low >= high) break;
    run = {low, high};
    ++agreeing;
  }
  if (agreeing == samples_.size()) return clock_sample_outcome::consistent;
  samples_.erase(samples_.begin(),
                 std::prev(samples_.end(), static_cast<std::ptrdiff_t>(agreeing)));
  return clock_sample_outcome::contradicted_older;
}

std::optional<clock_offset_estimator::offset_interval> clock_offset_estimator::intersection(
    boot_clock::time_point at) const {
  if (samples_.empty()) return std::nullopt;
  // add_sample() checked the samples against each other as of the newest one's receipt; measuring
  // ages from no earlier than that only widens them, so the intersection stays non-empty.
  const boot_clock::time_point reference = std::max(at, samples_.back().received);
  offset_interval result{nanoseconds::min(), nanoseconds::max()};
  for (const sample& s : samples_) {
    const nanoseconds allowance = drift_allowance(reference - s.sent);
    result.low = std::max(result.low, s.offset.low - allowance);
    result.high = std::min(result.high, s.offset.high + allowance);
  }
  return result;
}

std::optional<clock_offset_estimate> clock_offset_estimator::estimate(
    boot_clock::time_point boot_now, std::chrono::system_clock::time_point wall_now) const {
  const std::optional<offset_interval> k = intersection(boot_now);
  if (!k) return std::nullopt;
  const nanoseconds width = k->high - k->low;
  const nanoseconds midpoint = k->low + width / 2;
  const nanoseconds offset = boot_now.time_since_epoch() + midpoint -
                             std::chrono::duration_cast<nanoseconds>(wall_now.time_since_epoch());
  // Rounding the offset to microseconds errs by up to 500 ns more.
  return clock_offset_estimate{
      std::chrono::round<std::chrono::microseconds>(offset),
      std::chrono::ceil<std::chrono::microseconds>(half_rounded_up(width) + 500ns),
      samples_.size()};
}

std::optional<std::chrono::system_clock::time_point> clock_offset_estimator::store_time(
    boot_clock::time_point boot_now) const {
  const std::optional<offset_interval> k = intersection(boot_now);
  if (!k) return std::nullopt;
  const nanoseconds midpoint = k->low + (k->high - k->low) / 2;
  return std::chrono::system_clock::time_point{
      std::chrono::round<std::chrono::system_clock::duration>(boot_now.time_since_epoch() +
                                                              midpoint)};
}

std::optional<boot_clock::time_point> clock_offset_estimator::next_probe_time(
    boot_clock::time_point earliest) const {
  const std::optional<offset_interval> k = intersection(earliest);
  if (!k) return std::nullopt;
  const nanoseconds midpoint = k->low + (k->high - k->low) / 2;
  // The shortest round trip is the least disturbed by queueing or a new connection.
  nanoseconds round_trip = nanoseconds::max();
  for (const sample& s : samples_) round_trip = std::min(round_trip, s.received - s.sent);
  // If k is the midpoint, the store's second ticks over where boot time + midpoint is a whole
  // second; then the answer's Date tells on which side of the midpoint k lies.
  const nanoseconds handled_store_time = earliest.time_since_epoch() + round_trip / 2 + midpoint;
  const nanoseconds past_tick = (handled_store_time % 1s + 1s) % 1s;
  return earliest + (1s - past_tick) % 1s;
}

}  // namespace s3lect::inline v1::detail

namespace s3lect::inline v1 {

std::optional<store_clock_offset> clock_offset_of(const response_info& answer,
                                                  std::chrono::system_clock::time_point received) {
  if (!answer.server_date) return std::nullopt;
  // One sample on a time line of its own: the answer arrived at boot time `received` there.
  detail::clock_offset_estimator estimator;
  const detail::boot_clock::time_point at{received.time_since_epoch()};
  const auto round_trip = std::max(answer.round_trip, std::chrono::microseconds{0});
  estimator.add_sample(at - round_trip, at, *answer.server_date);
  const auto estimate = estimator.estimate(at, received);
  if (!estimate) return std::nullopt;
  return store_clock_offset{estimate->offset, estimate->error_bound};
}

}  // namespace s3lect::inline v1
