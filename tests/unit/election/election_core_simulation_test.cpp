// A randomised property test of election_core under clock faults. Several cores share a
// simulated store that honours conditions and dates its answers on its own clock (front ends
// whose clocks disagree by up to max_clock_skew; Date and Last-Modified in whole seconds,
// truncated or rounded; in some runs no such headers at all), behind a scheduler that delivers
// results with random delays, lost replies, writes that land after their timeout, 5xx after a
// commit, 409s, outages, partitions of single nodes, crashes, restarts with the same id,
// resignations and stops. The nodes' wall clocks are anywhere within ±15 minutes of true time
// and step during the run; nodes are suspended for up to four leases while their boot clock
// goes on (CLOCK_BOOTTIME); in peer mode, stable followers ask the leader's simulated health
// endpoint (watches, write serials, write ages; a suspended or crashed leader does not answer).
// Every leader runs a job as `s3lect run` does, under a guardian that kills it at T + G unless
// s3lect renewed, and that releases the lock (conditionally) when the s3lect process crashes;
// s3lect processes are also frozen alone, their guardians and jobs running on, and whole
// machines crash, guardians with them.
//
// Asserted (see support/simulation/checker.hpp for the exact definitions): no two
// leadership periods overlap, a period's end counting a suspended leader's deadline in real
// time; a takeover by expiry begins at least L − D after every leadership since the last
// release ended; one after a release begins after the released record was written, by a
// process that had stopped leading; gained terms strictly increase; terms in the store never
// go back and every change of holder brings a new term; a takeover sooner than L after the
// taker's first evidence of the record happens only where rule (c) may act (dated store,
// max_clock_skew set), and it does act there; one operation per core at a time; no timer spin;
// no two jobs of different processes or terms ever run at the same instant, and job terms
// strictly increase; with a healthy store, one leader at the end, running its job. Negative
// controls show that the checks fail with a boot clock that stops during suspends
// (CLOCK_MONOTONIC), a guardian deadline a lease late, or a guardian that releases without
// checking the nonce.
//
// A failure prints the seed, the scenario and the timeline before the first violation.
// SIM_TRACE=1 prints every core's log lines and the simulation's events as they happen, with
// the simulated time in milliseconds; SIM_SEED=s runs seed s alone.
#include "support/simulation/endpoint.hpp"
#include "support/simulation/faults.hpp"
#include "support/simulation/guardian.hpp"
#include "support/simulation/layer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace s3lect::test::simulation {
namespace {

// Runs per test: enough to hit rare interleavings, few enough that the whole suite stays
// under about 20 s in a debug build. SIM_RUNS=n searches longer; SIM_SEED=s runs only seed s
// (with SIM_TRACE=1: the whole trace of a failing seed).
constexpr unsigned default_runs = 100;

unsigned from_environment(const char* name, unsigned otherwise) {
  const char* value = std::getenv(name);
  return value ? static_cast<unsigned>(std::strtoul(value, nullptr, 10)) : otherwise;
}

constexpr nanoseconds chaos_time = std::chrono::minutes{20};
constexpr nanoseconds calm_time = std::chrono::minutes{2};

struct totals {
  unsigned runs = 0;
  std::uint64_t gains = 0;
  std::uint64_t expiry_takeovers = 0;
  std::uint64_t store_dated_takeovers = 0;
  std::uint64_t suspended_leaders = 0;
  std::uint64_t peer_answers = 0;
  std::uint64_t named_release_takeovers = 0;
  std::uint64_t frozen_leaders = 0;
  std::uint64_t jobs = 0;
  std::uint64_t deadline_kills = 0;
  std::size_t crash_releases = 0;
  std::vector<nanoseconds> crash_failovers;    ///< Crash to next leadership, after a crash release.
  std::vector<nanoseconds> release_takeovers;  ///< The crash release's commit to next leadership.
  std::optional<nanoseconds> closest_margin;
  coordination_counts coordination;
};

/// The q-quantile (0 … 1) of `times`.
nanoseconds quantile(std::vector<nanoseconds> times, double q) {
  if (times.empty()) return nanoseconds{0};
  std::sort(times.begin(), times.end());
  return times[static_cast<std::size_t>(q * static_cast<double>(times.size() - 1))];
}

// Runs seeds first_seed .. first_seed + runs - 1; every one must pass every check.
totals run_seeds(scenario what, unsigned first_seed, unsigned default_count = default_runs) {
  const unsigned runs = std::getenv("SIM_SEED") ? 1 : from_environment("SIM_RUNS", default_count);
  first_seed = from_environment("SIM_SEED", first_seed);
  totals sum;
  for (unsigned seed = first_seed; seed < first_seed + runs; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    world w(seed, what);
    w.run(chaos_time, calm_time);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "seed " << seed << ": timeline before the failure:\n"
                    << w.recent() << w.dump();
      return sum;
    }
    const auto& violations = w.checker().violations();
    if (!violations.empty()) {
      std::string listed;
      for (std::size_t v = 0; v < std::min<std::size_t>(violations.size(), 5); ++v) {
        listed += "\n  " + violations[v];
      }
      ADD_FAILURE() << "seed " << seed << ": " << violations.size() << " violation(s):" << listed
                    << "\ntimeline before the first:\n"
                    << w.checker().context() << w.dump();
      continue;
    }
    w.check_liveness();
    ++sum.runs;
    sum.gains += w.gains();
    sum.expiry_takeovers += w.expiry_takeovers();
    sum.store_dated_takeovers += w.store_dated_takeovers();
    sum.suspended_leaders += w.suspended_leaders();
    sum.peer_answers += w.peer_answers();
    sum.named_release_takeovers += w.named_release_takeovers();
    sum.frozen_leaders += w.frozen_leaders();
    sum.jobs += w.jobs();
    sum.deadline_kills += w.deadline_kills();
    sum.crash_releases += w.crash_releases();
    sum.crash_failovers.insert(sum.crash_failovers.end(), w.crash_failovers().begin(),
                               w.crash_failovers().end());
    sum.release_takeovers.insert(sum.release_takeovers.end(), w.release_takeovers().begin(),
                                 w.release_takeovers().end());
    sum.coordination.add(w.coordination());
    if (const auto margin = w.checker().closest_margin()) {
      sum.closest_margin = std::min(sum.closest_margin.value_or(*margin), *margin);
    }
  }
  std::printf(
      "%u runs: %llu leaderships, %llu takeovers by expiry (%llu sooner than rule (b) allows), "
      "%llu leaders suspended, %llu peer answers; closest takeover %s after L - D\n",
      sum.runs, static_cast<unsigned long long>(sum.gains),
      static_cast<unsigned long long>(sum.expiry_takeovers),
      static_cast<unsigned long long>(sum.store_dated_takeovers),
      static_cast<unsigned long long>(sum.suspended_leaders),
      static_cast<unsigned long long>(sum.peer_answers),
      sum.closest_margin ? in_ms(*sum.closest_margin).c_str() : "-");
  std::printf(
      "  %llu jobs, %llu killed by their guardian at T + G, %llu leaders frozen; %zu crash "
      "releases, %zu taken over: crash to next leader median %s, p90 %s; release to next leader "
      "median %s, p90 %s\n",
      static_cast<unsigned long long>(sum.jobs),
      static_cast<unsigned long long>(sum.deadline_kills),
      static_cast<unsigned long long>(sum.frozen_leaders), sum.crash_releases,
      sum.crash_failovers.size(), in_ms(quantile(sum.crash_failovers, 0.5)).c_str(),
      in_ms(quantile(sum.crash_failovers, 0.9)).c_str(),
      in_ms(quantile(sum.release_takeovers, 0.5)).c_str(),
      in_ms(quantile(sum.release_takeovers, 0.9)).c_str());
  if (sum.runs >= 20) {  // what many runs must have exercised
    EXPECT_GT(sum.gains, sum.runs * 5u) << "the chaos should cause many elections";
    EXPECT_GT(sum.expiry_takeovers, sum.runs) << "leaders should die and be taken over";
    EXPECT_GT(sum.suspended_leaders, sum.runs / 4) << "leaders should be suspended";
    EXPECT_GT(sum.frozen_leaders, sum.runs / 4) << "leaders' processes should be frozen";
    EXPECT_GT(sum.deadline_kills, sum.runs / 4) << "guardians should kill jobs at T + G";
    EXPECT_GT(sum.crash_releases, sum.runs / 4) << "guardians should release crashed leaders";
  }
  return sum;
}

TEST(ElectionCoreSimulation, SafeWithWallClocksAnywhereAndSuspends) {
  const totals sum = run_seeds({}, 1);
  if (sum.runs >= 20) {
    EXPECT_GT(sum.store_dated_takeovers, 0u) << "rule (c) should decide some takeovers";
  }
}

TEST(ElectionCoreSimulation, SafeWithMixedConfigs) {
  scenario what;
  what.mixed_configs = true;
  const totals sum = run_seeds(what, 1001);
  if (sum.runs >= 20) {
    EXPECT_GT(sum.store_dated_takeovers, 0u) << "rule (c) should decide some takeovers";
  }
}

TEST(ElectionCoreSimulation, SafeWithoutRuleC) {
  scenario what;
  what.rule_c = false;
  what.mixed_configs = true;
  const totals sum = run_seeds(what, 2001);
  EXPECT_EQ(sum.store_dated_takeovers, 0u) << "rule (c) is off: only rule (b) may act";
}

TEST(ElectionCoreSimulation, SafeInPeerMode) {
  scenario what;
  what.peer_mode = true;
  what.mixed_configs = true;
  const totals sum = run_seeds(what, 3001);
  EXPECT_GT(sum.peer_answers, sum.runs * 10u) << "stable followers should ask the leader";
  EXPECT_GT(sum.named_release_takeovers, 0u)
      << "watching followers should take over a named release without reading";
  std::printf("%llu takeovers of a release named in a watch answer\n",
              static_cast<unsigned long long>(sum.named_release_takeovers));
}

// Coordinated leadership: priorities, the watching followers as verified candidates, releases
// that name the best of them (or a random node, for some resignations). Every safety check
// above must hold unchanged: a name only orders who writes first. Besides, nobody but the named
// successor takes a named release over inside its window (the ledger's check), and a successor
// that was ready when the release landed nearly always wins it.
TEST(ElectionCoreSimulation, SafeWithCoordination) {
  scenario what;
  what.peer_mode = true;
  what.mixed_configs = true;
  what.coordinated = true;
  const totals sum = run_seeds(what, 7001);
  const coordination_counts& named = sum.coordination;
  std::printf(
      "%llu releases named a successor, %llu taken over, %llu by the successor; %llu with the "
      "successor ready (up, reachable, watching), %llu of them won by it; %llu preemptions\n",
      static_cast<unsigned long long>(named.named_releases),
      static_cast<unsigned long long>(named.taken),
      static_cast<unsigned long long>(named.successor_won),
      static_cast<unsigned long long>(named.ready),
      static_cast<unsigned long long>(named.ready_won),
      static_cast<unsigned long long>(named.preemptions));
  if (sum.runs >= 20) {
    EXPECT_GT(named.preemptions, 0u) << "priorities differ: higher ones should preempt";
    EXPECT_GT(named.ready, sum.runs) << "releases should name watching successors";
    EXPECT_GE(named.ready_won * 10, named.ready * 9) << "a ready successor should win";
    EXPECT_LT(named.successor_won, named.taken) << "some named nodes are absent: others win";
  }
}

// S3 mode: the leader's process crashes and its guardian releases the lock. First-hand followers
// read every F / 2 (2.5 s or 1 s in these worlds), settled or not, and see the release at their
// next read; on the economy schedule a settled follower sees it up to I (12 s or 30 s) later.
// Both orders of magnitude are asserted, so that the comparison shows what the schedule buys.
TEST(ElectionCoreSimulation, FirstHandFollowersTakeOverACrashReleaseWithinHalfARenewal) {
  const totals first_hand = run_seeds({}, 6001, 40);
  scenario economy;
  economy.economy_reads = true;
  const totals settled = run_seeds(economy, 6001, 40);
  if (first_hand.runs >= 20 && settled.runs >= 20) {
    ASSERT_GT(first_hand.crash_failovers.size(), first_hand.runs / 2);
    ASSERT_GT(settled.crash_failovers.size(), settled.runs / 2);
    EXPECT_LT(quantile(first_hand.release_takeovers, 0.5), 1500ms)
        << "median from the crash release to the next leader, reads every F / 2";
    EXPECT_GT(quantile(settled.release_takeovers, 0.5),
              2 * quantile(first_hand.release_takeovers, 0.5))
        << "the economy schedule should be the slower one (or the test measures nothing)";
  }
}

// The leader's process crashes and its guardian releases the lock some 10-100 ms later. Watching
// followers see their watch fail with a closed connection and re-read the store quickly
// (docs/peer-mode.md#a-crashed-leader): one of them takes over within a few hundred
// milliseconds, not at its next read F later.
TEST(ElectionCoreSimulation, WatchingFollowersTakeOverACrashReleaseWithinMilliseconds) {
  scenario what;
  what.peer_mode = true;
  what.every_node_watches = true;
  const totals sum = run_seeds(what, 5001, 40);  // its worlds are the peer-mode test's, mostly
  if (sum.runs >= 20) {
    ASSERT_GT(sum.crash_failovers.size(), sum.runs / 2);
    EXPECT_LT(quantile(sum.release_takeovers, 0.5), 1s)
        << "median from the crash release to the next leader";
  }
}

// A writer whose wall clock is more than a year ahead. decode_record once refused such a
// record (a limit relative to the reader's wall clock), so everyone else saw it as unreadable:
// they lost its term (the next takeover reused it: terms went back and two leaders held the same
// fencing token) and its leaseMs (a reader with a shorter lease took over before the writer's
// deadline). This run found it; the limit is now a fixed date no clock can reach.
TEST(ElectionCoreSimulation, SafeWithAWallClockMoreThanAYearAhead) {
  scenario what;
  what.mixed_configs = true;
  what.a_wall_clock_a_year_ahead = true;
  run_seeds(what, 4001);
}

// The negative control: a boot clock that stops during a suspend (CLOCK_MONOTONIC) lets a
// leader wake up believing it still leads after a follower took over. The checks must see it,
// else they prove nothing. The seeds are those of the first test, where the same worlds with
// CLOCK_BOOTTIME pass; the first failing one is run again with CLOCK_BOOTTIME to show it.
TEST(ElectionCoreSimulation, NegativeControlAMonotonicClockThatStopsInSuspendBreaksSafety) {
  constexpr unsigned seeds = 20;
  scenario broken;
  broken.boot_clock_counts_suspend = false;
  std::optional<unsigned> first_failing;
  unsigned failing = 0;
  for (unsigned seed = 1; seed <= seeds; ++seed) {
    world w(seed, broken);
    w.run(chaos_time, calm_time);
    ASSERT_FALSE(::testing::Test::HasFatalFailure()) << "seed " << seed;
    if (w.checker().violations().empty()) continue;
    ++failing;
    if (first_failing) continue;
    first_failing = seed;
    std::printf("negative control: seed %u fails as it should: %s\n", seed,
                w.checker().violations().front().c_str());
  }
  std::printf("negative control: %u of %u seeds fail\n", failing, seeds);
  ASSERT_TRUE(first_failing) << "no seed found the stopped clock: the checks are too weak";
  world fixed(*first_failing, {});
  fixed.run(chaos_time, calm_time);
  EXPECT_TRUE(fixed.checker().violations().empty())
      << "seed " << *first_failing
      << " with CLOCK_BOOTTIME: " << fixed.checker().violations().front();
}

/// Runs `count` seeds from `first_seed` with `broken`; returns the first that fails, having
/// printed it, and how many failed. Only violations that contain `needle` count.
std::pair<std::optional<unsigned>, unsigned> failing_seeds(const char* what, scenario broken,
                                                           const std::string& needle,
                                                           unsigned first_seed, unsigned count) {
  const unsigned seeds = from_environment("SIM_CONTROL_RUNS", count);
  std::optional<unsigned> first_failing;
  unsigned failing = 0;
  for (unsigned seed = first_seed; seed < first_seed + seeds; ++seed) {
    world w(seed, broken);
    w.run(chaos_time, calm_time);
    EXPECT_FALSE(::testing::Test::HasFatalFailure()) << "seed " << seed;
    const auto& violations = w.checker().violations();
    const auto found = std::find_if(violations.begin(), violations.end(), [&](const auto& v) {
      return v.find(needle) != std::string::npos;
    });
    if (found == violations.end()) continue;
    ++failing;
    if (first_failing) continue;
    first_failing = seed;
    std::printf("%s: seed %u fails as it should: %s\n", what, seed, found->c_str());
  }
  std::printf("%s: %u of %u seeds fail\n", what, failing, seeds);
  return {first_failing, failing};
}

// A guardian told "leading until S + D + (L − D)" kills the job of a frozen s3lect process only
// after a follower may have taken over: the two jobs overlap although the two leaderships never
// do (the core still demotes itself at S + D). Only the job checks can see it. Watching
// followers take over soonest after the lease; an acquire grace (a third of the seeds) delays
// the new job past the old one's end and hides the fault.
TEST(ElectionCoreSimulation, NegativeControlAGuardianDeadlineALeaseLateLetsJobsOverlap) {
  scenario broken;
  broken.peer_mode = true;
  broken.every_node_watches = true;
  broken.guardian_deadline_a_lease_late = true;
  const auto [first_failing, failing] =
      failing_seeds("late guardian deadline", broken, "jobs overlap", 5001, 30);
  ASSERT_TRUE(first_failing) << "no seed found the late deadline: the job checks are too weak";
  scenario right = broken;
  right.guardian_deadline_a_lease_late = false;
  world fixed(*first_failing, right);
  fixed.run(chaos_time, calm_time);
  EXPECT_TRUE(fixed.checker().violations().empty())
      << "seed " << *first_failing << " with T = S + D: " << fixed.checker().violations().front();
}

// Stops of s3lect's whole process group, and jobs that stop their own guardian: the guardian,
// in a session of its own, still ends a frozen s3lect's job at T + G; s3lect resumes a stopped
// guardian at each report and when it stops the job, and ends the tree itself when the
// guardian, stopped again, does not report its end within G and the margin.
TEST(ElectionCoreSimulation, SafeWhenJobsStopTheirGuardiansAndS3lectsGroupIsStopped) {
  scenario what;
  what.guardian_attacks = true;
  std::uint64_t group_stops = 0, guardian_stops = 0, unanswered = 0;
  const unsigned first = from_environment("SIM_SEED", 9001);
  const unsigned runs = std::getenv("SIM_SEED") ? 1 : from_environment("SIM_RUNS", 25);
  for (unsigned seed = first; seed < first + runs; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    world w(seed, what);
    w.run(chaos_time, calm_time);
    const auto& violations = w.checker().violations();
    EXPECT_TRUE(violations.empty()) << violations.front() << "\ntimeline before the first:\n"
                                    << w.checker().context();
    group_stops += w.group_stops();
    guardian_stops += w.guardian_stops();
    unanswered += w.unanswered_stops();
  }
  std::printf(
      "%u runs: %llu group stops of leaders, %llu guardians stopped by their job, %llu "
      "stops s3lect ended itself\n",
      runs, static_cast<unsigned long long>(group_stops),
      static_cast<unsigned long long>(guardian_stops), static_cast<unsigned long long>(unanswered));
  if (runs >= 20) {
    EXPECT_GT(group_stops, runs / 4) << "leaders' process groups should be stopped";
    EXPECT_GT(guardian_stops, runs / 4) << "jobs should stop their guardians";
    EXPECT_GT(unanswered, 0u) << "some stops should find the guardian stopped again";
  }
}

// The guardian in s3lect's process group (as before issue 35): a stop of the group stops it
// too, and nothing ends the frozen leader's job before a follower takes over.
TEST(ElectionCoreSimulation, NegativeControlAGuardianInS3lectsProcessGroupLetsJobsOverlap) {
  scenario broken;
  broken.guardian_attacks = true;
  broken.guardian_in_s3lects_group = true;
  const auto [first_failing, failing] =
      failing_seeds("guardian in s3lect's group", broken, "jobs overlap", 9001, 12);
  ASSERT_TRUE(first_failing) << "no seed found the group stop: the job checks are too weak";
  scenario right = broken;
  right.guardian_in_s3lects_group = false;
  world fixed(*first_failing, right);
  fixed.run(chaos_time, calm_time);
  EXPECT_TRUE(fixed.checker().violations().empty())
      << "seed " << *first_failing
      << " with a session of its own: " << fixed.checker().violations().front();
}

// A stop that waits for a guardian its job stopped (as before issue 35): the job outlives the
// leadership for as long as nothing resumes the guardian.
TEST(ElectionCoreSimulation, NegativeControlAStopThatWaitsForAStoppedGuardianLetsJobsOverlap) {
  scenario broken;
  broken.guardian_attacks = true;
  broken.stop_waits_for_a_stopped_guardian = true;
  const auto [first_failing, failing] =
      failing_seeds("stop waiting for a stopped guardian", broken, "jobs overlap", 9001, 12);
  ASSERT_TRUE(first_failing) << "no seed found the stopped guardian: the job checks are too weak";
  scenario right = broken;
  right.stop_waits_for_a_stopped_guardian = false;
  world fixed(*first_failing, right);
  fixed.run(chaos_time, calm_time);
  EXPECT_TRUE(fixed.checker().violations().empty())
      << "seed " << *first_failing
      << " with a bounded stop: " << fixed.checker().violations().front();
}

// A guardian that releases whatever record it finds after its s3lect process died, without
// comparing the nonce and term with s3lect's last report, releases a newer leader's record (one
// that took over while the dead process was frozen, say): a third node takes over at once.
TEST(ElectionCoreSimulation, NegativeControlAGuardianThatReleasesWithoutCheckingBreaksSafety) {
  scenario broken;
  broken.guardian_releases_unchecked = true;
  const auto [first_failing, failing] = failing_seeds("unchecked crash release", broken, "", 1, 20);
  ASSERT_TRUE(first_failing) << "no seed found the unchecked release: the checks are too weak";
  world fixed(*first_failing, {});
  fixed.run(chaos_time, calm_time);
  EXPECT_TRUE(fixed.checker().violations().empty())
      << "seed " << *first_failing
      << " with the nonce check: " << fixed.checker().violations().front();
}

}  // namespace
}  // namespace s3lect::test::simulation
