// The clock offset estimator against a simulated store whose clock is known exactly: every
// sample is taken at a random moment inside its round trip, and the truth must always lie within
// the reported bound.
#include "clock_offset.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

namespace {

using s3lect::detail::boot_clock;
using s3lect::detail::clock_offset_estimate;
using s3lect::detail::clock_offset_estimator;
using s3lect::detail::clock_sample_outcome;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::nanoseconds;
using std::chrono::system_clock;
using namespace std::chrono_literals;

constexpr boot_clock::time_point boot_start{1000s};
// The store's clock minus boot_clock, with a fraction of a second so that phases matter.
constexpr nanoseconds store_minus_boot = 1'700'000'000s + 123'456'789ns - 1000s;

/// A store whose clock is boot_clock + `offset` (+ drift), answering with a truncated or
/// rounded Date.
struct simulated_store {
  nanoseconds offset = store_minus_boot;
  std::int64_t drift_ppb = 0;  // how much faster than boot_clock, parts per billion
  bool rounds_date = false;
  nanoseconds date_lag{0};  // a coarse clock: Date shows the time this much earlier

  nanoseconds time_at(boot_clock::time_point t) const {
    const nanoseconds since_start = t - boot_start;
    return t.time_since_epoch() + offset +
           nanoseconds{since_start.count() * drift_ppb / 1'000'000'000};
  }
  system_clock::time_point date_at(boot_clock::time_point t) const {
    const nanoseconds store_time = time_at(t) + (rounds_date ? nanoseconds{500ms} : 0ns) - date_lag;
    return system_clock::time_point{std::chrono::floor<std::chrono::seconds>(store_time)};
  }
};

/// This node: its wall clock is the store's (drift-free) clock plus `ahead_of_store`.
struct simulated_node {
  nanoseconds ahead_of_store{};

  system_clock::time_point wall_at(boot_clock::time_point t) const {
    return system_clock::time_point{duration_cast<system_clock::duration>(
        t.time_since_epoch() + store_minus_boot + ahead_of_store)};
  }
};

/// Sends requests to a simulated store; the store reads its clock at a random moment in the
/// round trip, as a real one does somewhere between receiving the request and answering.
class simulated_requests {
 public:
  explicit simulated_requests(unsigned seed) : rng_(seed) {}

  clock_sample_outcome send(clock_offset_estimator& estimator, const simulated_store& store,
                            boot_clock::time_point sent, nanoseconds round_trip) {
    std::uniform_int_distribution<std::int64_t> moment(0, round_trip.count());
    const boot_clock::time_point handled = sent + nanoseconds{moment(rng_)};
    return estimator.add_sample(sent, sent + round_trip, store.date_at(handled));
  }

  nanoseconds random_between(nanoseconds low, nanoseconds high) {
    return nanoseconds{
        std::uniform_int_distribution<std::int64_t>(low.count(), high.count())(rng_)};
  }

 private:
  std::mt19937 rng_;
};

/// The estimate at `now`, after checking that the true offset lies within its bound.
clock_offset_estimate expect_truth_inside(const clock_offset_estimator& estimator,
                                          const simulated_store& store, const simulated_node& node,
                                          boot_clock::time_point now) {
  const system_clock::time_point wall_now = node.wall_at(now);
  const std::optional<clock_offset_estimate> estimate = estimator.estimate(now, wall_now);
  if (!estimate) {
    ADD_FAILURE() << "no estimate";
    return {};
  }
  const nanoseconds truth = store.time_at(now) - wall_now.time_since_epoch();
  const nanoseconds error = truth - nanoseconds{estimate->offset};
  EXPECT_LE(std::chrono::abs(error), estimate->error_bound)
      << "truth " << truth.count() << " ns, estimate " << estimate->offset.count() << " ± "
      << estimate->error_bound.count() << " us";
  return *estimate;
}

TEST(ClockOffset, NothingBeforeTheFirstSample) {
  const clock_offset_estimator estimator;
  EXPECT_FALSE(estimator.estimate(boot_start, simulated_node{}.wall_at(boot_start)));
  EXPECT_FALSE(estimator.store_time(boot_start));
  EXPECT_FALSE(estimator.next_probe_time(boot_start));
}

TEST(ClockOffset, OneSampleBoundsTheOffsetToHalfASecondPlusHalfTheRoundTrip) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const simulated_store store;
    const simulated_node node;
    simulated_requests requests(seed);
    clock_offset_estimator estimator;
    const boot_clock::time_point sent = boot_start + requests.random_between(0ns, 1s);
    EXPECT_EQ(requests.send(estimator, store, sent, 2ms), clock_sample_outcome::consistent);
    const clock_offset_estimate estimate = expect_truth_inside(estimator, store, node, sent + 2ms);
    EXPECT_EQ(estimate.samples, 1u);
    // 0.5 s + 1 ms + half the allowed Date lag, plus the drift allowance over the round trip
    // and rounding: well under 2 us.
    const auto expected = 501ms + clock_offset_estimator::max_date_lag / 2;
    EXPECT_GE(estimate.error_bound, expected);
    EXPECT_LE(estimate.error_bound, expected + 2us);
  }
}

TEST(ClockOffset, RandomPhasesNarrowTheBound) {
  const simulated_store store;
  const simulated_node node;
  simulated_requests requests(42);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  microseconds bound_after_ten{};
  for (int i = 1; i <= 64; ++i) {
    now += requests.random_between(500ms, 2500ms);
    const nanoseconds round_trip = requests.random_between(1ms, 5ms);
    EXPECT_EQ(requests.send(estimator, store, now, round_trip), clock_sample_outcome::consistent);
    now += round_trip;
    const clock_offset_estimate estimate = expect_truth_inside(estimator, store, node, now);
    EXPECT_EQ(estimate.samples, static_cast<std::size_t>(i));
    if (i == 10) bound_after_ten = estimate.error_bound;
  }
  // About 1/(n + 1) s + half a round trip, varying with the phases: 6 to 35 ms for 64 samples
  // over ten seeds. A single sample gives 0.5 s.
  EXPECT_LT(bound_after_ten, 300ms);
  EXPECT_LT(expect_truth_inside(estimator, store, node, now).error_bound, 50ms);
}

/// One sample at a random phase, then `probes` requests sent at next_probe_time() (as a caller
/// that cannot send before it wants to: a probe time at most a second later), each with the
/// truth checked inside the bound. Returns the last bound.
nanoseconds probe_rounds(const simulated_store& store, unsigned seed, int probes,
                         bool expect_consistent) {
  const simulated_node node;
  simulated_requests requests(seed);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start + requests.random_between(0ns, 1s);
  requests.send(estimator, store, now, 2ms);
  for (int probe = 0; probe < probes; ++probe) {
    const std::optional<boot_clock::time_point> send_at =
        estimator.next_probe_time(now + requests.random_between(300ms, 1500ms));
    EXPECT_TRUE(send_at);
    if (!send_at) return nanoseconds::max();
    now = *send_at;
    const clock_sample_outcome outcome = requests.send(estimator, store, now, 2ms);
    if (expect_consistent) {
      EXPECT_EQ(outcome, clock_sample_outcome::consistent);
    }
    now += 2ms;
    expect_truth_inside(estimator, store, node, now);
  }
  return expect_truth_inside(estimator, store, node, now).error_bound;
}

TEST(ClockOffset, ProbingAtNextProbeTimeReachesAFewRoundTrips) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    EXPECT_LT(probe_rounds(simulated_store{}, seed, 12, true),
              3ms + clock_offset_estimator::max_date_lag)
        << "seed " << seed;
  }
}

TEST(ClockOffset, AStoreWhoseDateLagsByAKernelTickStaysInsideTheBound) {
  // The local radosgw: Date up to 3 ms behind its clock (a coarse clock). Probing pins the tick
  // to within a round trip, so without the allowance the truth would fall outside the bound.
  simulated_store store;
  store.date_lag = 4ms;
  for (unsigned seed = 1; seed <= 20; ++seed) probe_rounds(store, seed, 16, false);
}

TEST(ClockOffset, NodeClockAheadOfTheStoreGivesANegativeOffset) {
  const simulated_store store;
  const simulated_node node{300s};
  simulated_requests requests(7);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  for (int i = 0; i < 20; ++i) {
    now += requests.random_between(500ms, 1500ms);
    requests.send(estimator, store, now, 3ms);
  }
  const clock_offset_estimate estimate = expect_truth_inside(estimator, store, node, now);
  EXPECT_LE(std::chrono::abs(estimate.offset + 300s), estimate.error_bound);
  EXPECT_LT(estimate.error_bound, 100ms);
  // The store's time is boot time + k, whatever the node's wall clock says.
  const std::optional<system_clock::time_point> store_now = estimator.store_time(now);
  ASSERT_TRUE(store_now);
  EXPECT_LE(std::chrono::abs(store_now->time_since_epoch() - store.time_at(now)),
            estimate.error_bound);
}

TEST(ClockOffset, StoreClockStepIsAbsorbedAfterOneSample) {
  for (const nanoseconds step : {nanoseconds{7s}, nanoseconds{-7s}}) {
    simulated_store store;
    const simulated_node node;
    simulated_requests requests(11);
    clock_offset_estimator estimator;
    boot_clock::time_point now = boot_start;
    for (int i = 0; i < 30; ++i) {
      now += requests.random_between(500ms, 1500ms);
      EXPECT_EQ(requests.send(estimator, store, now, 2ms), clock_sample_outcome::consistent);
    }
    store.offset += step;
    now += 1s;
    EXPECT_EQ(requests.send(estimator, store, now, 2ms), clock_sample_outcome::contradicted_older);
    now += 2ms;
    clock_offset_estimate estimate = expect_truth_inside(estimator, store, node, now);
    EXPECT_EQ(estimate.samples, 1u) << "the samples before the step are dropped";
    EXPECT_LE(std::chrono::abs(estimate.offset - step), estimate.error_bound);
    for (int i = 0; i < 10; ++i) {
      now += requests.random_between(500ms, 1500ms);
      EXPECT_EQ(requests.send(estimator, store, now, 2ms), clock_sample_outcome::consistent);
    }
    estimate = expect_truth_inside(estimator, store, node, now);
    EXPECT_EQ(estimate.samples, 11u);
  }
}

TEST(ClockOffset, WallClockStepChangesTheOffsetAtOnce) {
  const simulated_store store;
  simulated_node node;
  simulated_requests requests(5);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  for (int i = 0; i < 20; ++i) {
    now += requests.random_between(500ms, 1500ms);
    requests.send(estimator, store, now, 2ms);
  }
  now += 1s;
  const clock_offset_estimate before = expect_truth_inside(estimator, store, node, now);
  node.ahead_of_store += 10s;  // e.g. NTP steps this node's clock; no new sample
  const clock_offset_estimate after = expect_truth_inside(estimator, store, node, now);
  EXPECT_EQ(after.offset, before.offset - 10s);
  EXPECT_EQ(after.error_bound, before.error_bound);
  EXPECT_EQ(after.samples, before.samples);
}

TEST(ClockOffset, UnusableSamplesAreRejected) {
  const simulated_store store;
  const simulated_node node;
  clock_offset_estimator estimator;
  const boot_clock::time_point sent = boot_start + 400ms;
  // A Date far from the truth: were it used, it would contradict or move the estimate.
  const system_clock::time_point wrong_date = store.date_at(sent) + 30s;
  EXPECT_EQ(estimator.add_sample(sent, sent - 1ns, wrong_date), clock_sample_outcome::rejected);
  EXPECT_EQ(estimator.add_sample(sent, sent + 61s, wrong_date), clock_sample_outcome::rejected);
  EXPECT_FALSE(estimator.estimate(sent, node.wall_at(sent)));

  EXPECT_EQ(estimator.add_sample(sent, sent + 60s, store.date_at(sent + 30s)),
            clock_sample_outcome::consistent)
      << "a 60 s round trip is still usable";
  EXPECT_EQ(estimator.add_sample(sent + 61s, sent + 62s, store.date_at(sent + 61s)),
            clock_sample_outcome::consistent);
  const clock_offset_estimate before = expect_truth_inside(estimator, store, node, sent + 70s);
  EXPECT_EQ(estimator.add_sample(sent + 63s, sent + 63s - 1ms, wrong_date),
            clock_sample_outcome::rejected);
  EXPECT_EQ(estimator.add_sample(sent + 63s, sent + 124s, wrong_date),
            clock_sample_outcome::rejected);
  const clock_offset_estimate after = expect_truth_inside(estimator, store, node, sent + 70s);
  EXPECT_EQ(after.offset, before.offset);
  EXPECT_EQ(after.error_bound, before.error_bound);
  EXPECT_EQ(after.samples, 2u);
}

TEST(ClockOffset, SamplesOlderThanFifteenMinutesAreDropped) {
  const simulated_store store;
  const simulated_node node;
  simulated_requests requests(3);
  clock_offset_estimator estimator;
  // One sample a minute at minutes 0..19, then one at 20.5 min: those of minutes 6..19 are
  // within 15 minutes of it.
  for (int minute = 0; minute < 20; ++minute) {
    requests.send(estimator, store, boot_start + std::chrono::minutes{minute}, 2ms);
  }
  const boot_clock::time_point last = boot_start + 20min + 30s;
  requests.send(estimator, store, last, 2ms);
  EXPECT_EQ(expect_truth_inside(estimator, store, node, last + 2ms).samples, 15u);
}

TEST(ClockOffset, AtMostTheNewest64SamplesAreKept) {
  const simulated_store store;
  const simulated_node node;
  simulated_requests requests(4);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  for (int i = 0; i < 100; ++i) {
    now += requests.random_between(500ms, 1500ms);
    requests.send(estimator, store, now, 2ms);
  }
  EXPECT_EQ(expect_truth_inside(estimator, store, node, now).samples,
            clock_offset_estimator::max_samples);
}

TEST(ClockOffset, DriftWithinTheAllowanceKeepsTheTruthInside) {
  for (const std::int64_t drift_ppb : {std::int64_t{90'000}, std::int64_t{-90'000}}) {
    simulated_store store;
    store.drift_ppb = drift_ppb;  // 90 ppm: 81 ms over the 15 minutes of samples
    const simulated_node node;
    simulated_requests requests(9);
    clock_offset_estimator estimator;
    boot_clock::time_point now = boot_start;
    for (int i = 0; i < 400; ++i) {
      now += requests.random_between(2s, 3s);
      EXPECT_EQ(requests.send(estimator, store, now, 2ms), clock_sample_outcome::consistent);
      expect_truth_inside(estimator, store, node, now + 2ms);
    }
  }
}

TEST(ClockOffset, RoundingStoreLooksHalfASecondAhead) {
  simulated_store store;
  store.rounds_date = true;
  const simulated_node node;
  simulated_requests requests(13);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  for (int i = 0; i < 64; ++i) {
    now += requests.random_between(500ms, 2500ms);
    EXPECT_EQ(requests.send(estimator, store, now, 2ms), clock_sample_outcome::consistent);
  }
  const std::optional<clock_offset_estimate> estimate = estimator.estimate(now, node.wall_at(now));
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->samples, 64u);
  EXPECT_LT(estimate->error_bound, 30ms);
  EXPECT_LE(std::chrono::abs(estimate->offset - 500ms), estimate->error_bound)
      << "documented: a rounding store reads as a truncating one 0.5 s ahead";
}

TEST(ClockOffset, FrontEndsThatDisagreeKeepTheBoundFinite) {
  simulated_store truncating;
  simulated_store rounding;
  rounding.rounds_date = true;
  const simulated_node node;
  simulated_requests requests(17);
  clock_offset_estimator estimator;
  boot_clock::time_point now = boot_start;
  int contradictions = 0;
  for (int i = 0; i < 200; ++i) {
    now += requests.random_between(500ms, 2500ms);
    const simulated_store& front_end = i % 3 == 0 ? rounding : truncating;
    const clock_sample_outcome outcome = requests.send(estimator, front_end, now, 2ms);
    EXPECT_NE(outcome, clock_sample_outcome::rejected);
    if (outcome == clock_sample_outcome::contradicted_older) ++contradictions;
    const std::optional<clock_offset_estimate> estimate =
        estimator.estimate(now + 2ms, node.wall_at(now + 2ms));
    ASSERT_TRUE(estimate);
    EXPECT_LE(estimate->error_bound, 502ms + clock_offset_estimator::max_date_lag / 2);
    // Whichever front end the kept samples came from, the estimate is within 0.5 s + bound.
    EXPECT_LE(std::chrono::abs(estimate->offset), estimate->error_bound + 500ms);
  }
  EXPECT_GT(contradictions, 0);
}

}  // namespace
