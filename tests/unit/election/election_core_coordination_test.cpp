// Coordinated leadership in the sans-I/O core (docs/coordination.md): a released record's
// successor writes at once and everyone else holds off for its window (counted from their own
// first sight, clamped to their lease); keepOut holds the forced-out holder off; a dead leader's
// ranks delay the others' expiry takeovers by rank x step; a leader names its best verified,
// watching candidate; and the pure functions that order all of this.
#include "coordination.hpp"
#include "support/election_core_harness.hpp"

namespace s3lect::test {
namespace {

using detail::candidate;
using detail::peer_watch_outcome;

/// A released record of holder `holder`, term `term`, naming `successor` and `keep_out`.
std::string release_naming(const std::string& successor,
                           std::optional<std::chrono::milliseconds> handover,
                           const std::string& keep_out = {}, const std::string& holder = "a",
                           std::uint64_t term = 3) {
  const record_decoding plain = decode_record(released_body(holder, term));
  lock_record record = plain.record.value_or(lock_record{});
  record.successor = successor;
  record.handover = handover;
  record.keep_out = keep_out;
  return encode_record(record);
}

/// A record held by "a" (term 3) that ranks `ranks` as its candidates.
std::string held_ranking(wall_time updated, std::vector<ranked_candidate> ranks) {
  lock_record record = decode_record(foreign_body("a", 3, updated)).record.value_or(lock_record{});
  record.candidates = std::move(ranks);
  return encode_record(record);
}

candidate watcher(std::string id, std::int32_t priority, steady_time since, bool verified = true,
                  bool watching = true) {
  return candidate{std::move(id), priority, since, watching, verified};
}

/// Feeds `body` with `etag` to every read and fires every timer until the core writes.
void read_until_writing(core_driver& d, const std::string& body, const std::string& etag) {
  for (int i = 0; i < 100 && !d.writing(); ++i) {
    d.wake();
    if (d.reading()) d.read(body, etag);
  }
  ASSERT_TRUE(d.writing());
}

elector_config ranked_config(const std::string& id, unsigned max_ranks = 3) {
  elector_config config = core_config(id);
  config.coordination.rank_step = 250ms;
  config.coordination.max_ranks = max_ranks;
  return config;
}

// ---------------------------------------------------------------------------------------------
// The pure functions

TEST(ElectionCoordination, TheBestSuccessorIsAVerifiedWatcherOfTheHighestPriority) {
  const steady_time t{std::chrono::hours{1}};
  const std::vector<candidate> list{
      watcher("forged", 1000, t, false),    // claims much, proved nothing
      watcher("gone", 50, t, true, false),  // verified, but holds no watch now
      watcher("self", 70, t),               // the leader itself
      watcher("low", 1, t), watcher("high", 5, t)};
  EXPECT_EQ(detail::best_successor(list, "self"), "high");
  EXPECT_EQ(detail::best_successor({watcher("forged", 9, t, false)}, "self"), std::nullopt);
  EXPECT_EQ(detail::best_successor({}, "self"), std::nullopt);
}

TEST(ElectionCoordination, TiesGoToTheLongestWatchingThenTheSmallerId) {
  const steady_time t{std::chrono::hours{1}};
  EXPECT_EQ(detail::best_successor({watcher("a", 2, t + 1s), watcher("b", 2, t)}, "x"), "b");
  EXPECT_EQ(detail::best_successor({watcher("d", 2, t), watcher("c", 2, t)}, "x"), "c");
  const std::vector<ranked_candidate> order =
      detail::ranked({watcher("d", 2, t), watcher("e", 3, t + 5s), watcher("c", 2, t),
                      watcher("a", 2, t + 1s), watcher("u", 9, t, false)},
                     "x");
  const std::vector<ranked_candidate> expected{{"e", 3}, {"c", 2}, {"d", 2}, {"a", 2}};
  EXPECT_EQ(order, expected);
}

TEST(ElectionCoordination, ARecordRanksAtMostEightCandidates) {
  const steady_time t{std::chrono::hours{1}};
  std::vector<candidate> many;
  for (int i = 0; i < 12; ++i) many.push_back(watcher("n" + std::to_string(i), i, t));
  const std::vector<ranked_candidate> order = detail::ranked(many, "x");
  ASSERT_EQ(order.size(), max_record_candidates);
  EXPECT_EQ(order.front().id, "n11");
  EXPECT_EQ(order.back().id, "n4");
}

TEST(ElectionCoordination, TheRankDelayIsRankTimesStepUpToMaxRanks) {
  lock_record record;
  EXPECT_EQ(detail::rank_delay(record, "c", ranked_config("c")), 0ms)
      << "no candidates listed: today's timing";
  record.candidates = {{"b", 3}, {"c", 2}, {"d", 1}, {"e", 1}, {"f", 0}};
  EXPECT_EQ(detail::rank_delay(record, "b", ranked_config("b")), 0ms);
  EXPECT_EQ(detail::rank_delay(record, "c", ranked_config("c")), 250ms);
  EXPECT_EQ(detail::rank_delay(record, "d", ranked_config("d")), 500ms);
  EXPECT_EQ(detail::rank_delay(record, "f", ranked_config("f")), 750ms) << "capped at max_ranks";
  EXPECT_EQ(detail::rank_delay(record, "zz", ranked_config("zz")), 750ms) << "unlisted";
  EXPECT_EQ(detail::rank_delay(record, "zz", ranked_config("zz", 1)), 250ms);
  EXPECT_EQ(detail::rank_delay(record, "zz", core_config("zz")), 0ms) << "no step in S3 mode";
}

TEST(ElectionCoordination, AReleaseHoldsOffEveryoneButItsSuccessorOrOnlyItsKeepOut) {
  const elector_config config = core_config("c");  // L 15 s, window F / 5 = 1 s
  lock_record record;
  record.released = true;
  EXPECT_EQ(detail::release_hold_off(record, "c", config), std::nullopt) << "names nobody";
  record.successor = "b";
  record.handover = 3s;
  EXPECT_EQ(detail::release_hold_off(record, "b", config), 0ms);
  EXPECT_EQ(detail::release_hold_off(record, "c", config), 3s);
  record.handover.reset();
  EXPECT_EQ(detail::release_hold_off(record, "c", config), 1s) << "the reader's own window";
  record.handover = std::chrono::hours{24};
  EXPECT_EQ(detail::release_hold_off(record, "c", config), 15s) << "never beyond our lease";
  record.successor.clear();
  record.keep_out = "a";
  record.handover = 3s;
  EXPECT_EQ(detail::release_hold_off(record, "a", config), 3s);
  EXPECT_EQ(detail::release_hold_off(record, "c", config), 0ms);
}

// ---------------------------------------------------------------------------------------------
// Followers: successor, window, keepOut

TEST(ElectionCoreCoordination, TheNamedSuccessorWritesAtOnce) {
  core_driver d(core_config("b"));
  d.start();
  d.read(release_naming("b", 1s), "er");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().type, put_condition::kind::if_match);
  EXPECT_EQ(d.condition().etag, "er");
}

TEST(ElectionCoreCoordination, OthersWaitTheWindowThenWriteIfMatchWithoutReading) {
  core_driver d(core_config("c"));
  d.start();
  d.read(release_naming("b", 1s), "er");
  const steady_time first_seen = d.now.steady;
  EXPECT_FALSE(d.writing()) << "the successor goes first";
  EXPECT_EQ(d.last.wake_at, first_seen + 1s);
  d.wake();
  ASSERT_TRUE(d.writing()) << "no read first: If-Match makes a stale view harmless";
  EXPECT_EQ(d.condition().etag, "er");
  d.write_error(errc::precondition_failed);  // the successor took it
  EXPECT_TRUE(d.reading());
  EXPECT_FALSE(d.core.is_leader());
}

TEST(ElectionCoreCoordination, AReleaseNamingAnAbsentNodeCostsExactlyItsWindow) {
  core_driver d(core_config("c"));
  d.start();
  const std::string body = release_naming("gone", 10s);
  d.read(body, "er");
  const steady_time first_seen = d.now.steady;
  read_until_writing(d, body, "er");
  EXPECT_EQ(d.now.steady, first_seen + 10s) << "re-reads of the same release move nothing";
}

TEST(ElectionCoreCoordination, KeepOutHoldsTheOldHolderOffWhileOthersGoAtOnce) {
  const std::string body = release_naming({}, 3s, "a");
  core_driver other(core_config("b"));
  other.start();
  other.read(body, "er");
  EXPECT_TRUE(other.writing());

  core_driver holder(core_config("a"));
  holder.start();
  holder.read(body, "er");
  const steady_time first_seen = holder.now.steady;
  EXPECT_FALSE(holder.writing());
  read_until_writing(holder, body, "er");
  EXPECT_EQ(holder.now.steady, first_seen + 3s);
}

TEST(ElectionCoreCoordination, AHostileWindowOfADayIsClampedToTheLease) {
  core_driver d(core_config("c"));
  d.start();
  const std::string body = release_naming("b", std::chrono::hours{24});
  d.read(body, "er");
  const steady_time first_seen = d.now.steady;
  read_until_writing(d, body, "er");
  EXPECT_EQ(d.now.steady, first_seen + 15s);
}

TEST(ElectionCoreCoordination, ANewReleaseCountsItsWindowFromItsOwnFirstSight) {
  core_driver d(core_config("c"));
  d.start();
  d.read(release_naming("b", 10s), "er1");
  d.wake();
  ASSERT_TRUE(d.reading());
  const std::string again = release_naming("b", 10s, {}, "b", 5);  // "b" took it, released again
  d.read(again, "er2");
  const steady_time first_seen = d.now.steady;
  read_until_writing(d, again, "er2");
  EXPECT_EQ(d.now.steady, first_seen + 10s);
  EXPECT_EQ(d.condition().etag, "er2");
}

// ---------------------------------------------------------------------------------------------
// Through the leader's watch answer

elector_config watching_config(const std::string& id) {
  elector_config config = core_config(id);
  config.peer.enabled = true;
  config.peer.watch = true;
  return config;
}

/// Follows leader "a" (term 3) until it holds a watch on it.
void watch_leader(core_driver& d) {
  d.start();
  d.read(foreign_body("a", 3, d.now.wall, "aaaaaaaaaaaa0001"), "ea1");
  d.wake();
  const std::string body = foreign_body("a", 3, d.now.wall, "aaaaaaaaaaaa0002");
  d.read(body, "ea2");
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  ASSERT_TRUE(d.checking_peer()) << "a plain check introduces the leader";
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  ASSERT_TRUE(d.last.operation->peer.watch) << "a watch is held";
  d.advance(2s);
}

TEST(ElectionCoreCoordination, TheSuccessorTakesTheWatchHintWithoutARead) {
  core_driver d(watching_config("b"));
  watch_leader(d);
  d.peer_released_to("er", 3, "b", 1s);
  ASSERT_TRUE(d.writing()) << "one round trip, as without names";
  EXPECT_EQ(d.condition().etag, "er");
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCoreCoordination, OtherWatchersHoldOffTheWindowOfTheWatchHint) {
  core_driver d(watching_config("c"));
  watch_leader(d);
  d.peer_released_to("er", 3, "b", 1s);
  const steady_time first_seen = d.now.steady;
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, first_seen + 1s);
  d.wake();
  ASSERT_TRUE(d.writing()) << "still no read: If-Match on the ETag the leader told";
  EXPECT_EQ(d.condition().etag, "er");
}

// ---------------------------------------------------------------------------------------------
// Crash ranks

/// A follower of the dead leader "a" whose record lists `ranks`: the time from its first sight
/// of the record to its takeover write.
std::chrono::nanoseconds takeover_after(const elector_config& config,
                                        std::vector<ranked_candidate> ranks) {
  core_driver d(config);
  d.start();
  const std::string body = held_ranking(d.now.wall, std::move(ranks));
  d.read(body, "ea");
  const steady_time first_seen = d.now.steady;
  for (int i = 0; i < 100 && !d.writing(); ++i) {
    d.wake();
    if (d.now.steady >= first_seen + 15s && !d.writing()) {
      EXPECT_EQ(d.core.status().mode, poll_mode::frequent) << "frequent from the expiry on";
    }
    if (d.reading()) d.read(body, "ea");
  }
  EXPECT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "ea");
  return d.now.steady - first_seen;
}

TEST(ElectionCoreCoordination, RanksDelayAnExpiryTakeoverByRankTimesStep) {
  const std::vector<ranked_candidate> ranks{{"b", 3}, {"c", 2}, {"d", 1}};
  EXPECT_EQ(takeover_after(ranked_config("b"), ranks), 15s) << "the best pays nothing";
  EXPECT_EQ(takeover_after(ranked_config("c"), ranks), 15250ms);
  EXPECT_EQ(takeover_after(ranked_config("d"), ranks), 15500ms);
  EXPECT_EQ(takeover_after(ranked_config("zz"), ranks), 15750ms) << "unlisted: max_ranks";
  EXPECT_EQ(takeover_after(ranked_config("zz", 1), ranks), 15250ms);
}

TEST(ElectionCoreCoordination, ARecordWithoutCandidatesKeepsTodaysTiming) {
  EXPECT_EQ(takeover_after(ranked_config("c"), {}), 15s);
  EXPECT_EQ(takeover_after(core_config("c"), {{"b", 1}}), 15s) << "no step: no delay";
}

TEST(ElectionCoreCoordination, RanksNeverSpeedUpATakeoverDatedByTheStore) {
  // Rule (c) dates the dead leader's write so that it expires at this very read: rank 1 still
  // waits its step, no less.
  core_driver d(ranked_config("c"));
  d.start();
  const std::string body = held_ranking(d.now.wall, {{"b", 3}, {"c", 2}});
  d.read_aged(body, "ea", 19s);  // 19 s - 2 s (resolution) + 2 s (skew) = L ago
  const steady_time first_seen = d.now.steady;
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, first_seen + 250ms);
  d.wake();
  EXPECT_TRUE(d.writing());
}

// ---------------------------------------------------------------------------------------------
// Resigning: our own hold-off, and the successor's

TEST(ElectionCoreCoordination, NamedAsSuccessorAResigningNodeSkipsItsOwnHoldOff) {
  core_driver d(core_config("b"));
  d.become_leader("e1");
  d.resign(10s);
  d.write_ok("er1");
  d.advance(1s);
  d.wake();
  ASSERT_TRUE(d.reading());
  d.read(release_naming("b", 1s, {}, "a", 2), "er2");
  EXPECT_TRUE(d.writing()) << "the leader that released named us: the hold-off is for others";
}

TEST(ElectionCoreCoordination, KeptOutANodeKeepsItsOwnHoldOffEvenIfNamed) {
  core_driver d(core_config("b"));
  d.become_leader("e1");
  const steady_time resigned = d.now.steady;
  d.resign(10s);
  d.write_ok("er1");
  d.advance(1s);
  d.wake();
  ASSERT_TRUE(d.reading());
  const std::string body = release_naming("b", 1s, "b", "a", 2);
  d.read(body, "er2");
  EXPECT_FALSE(d.writing());
  read_until_writing(d, body, "er2");
  EXPECT_EQ(d.now.steady, resigned + 10s);
}

// ---------------------------------------------------------------------------------------------
// Leaders: what their records say

TEST(ElectionCoreCoordination, TheReleaseNamesTheBestVerifiedWatchingCandidate) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  const steady_time t = d.now.steady;
  d.candidates({watcher("forged", 100, t, false), watcher("z", 5, t, true, false),
                watcher("y", 1, t + 1s), watcher("x", 1, t)});
  d.stop();
  ASSERT_TRUE(d.writing());
  const lock_record release = d.written();
  EXPECT_TRUE(release.released);
  EXPECT_EQ(release.successor, "x") << "tied with y, watching longer";
  EXPECT_EQ(release.handover, 1s);
  EXPECT_EQ(release.keep_out, "");
  const std::vector<ranked_candidate> ranks{{"x", 1}, {"y", 1}};
  EXPECT_EQ(release.candidates, ranks);
  EXPECT_EQ(release.priority, 0) << "written: the record lists candidates";
  d.write_ok("er");
  const auto finished = d.last_notices<release_finished>();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].successor, "x");
  EXPECT_EQ(finished[0].handover, 1s);
}

TEST(ElectionCoreCoordination, ARenewalRanksTheCandidatesAndNamesNobody) {
  elector_config config = core_config("a");
  config.coordination.priority = 7;
  core_driver d(config);
  d.become_leader("e1");
  d.candidates({watcher("y", 2, d.now.steady), watcher("forged", 90, d.now.steady, false)});
  d.wake();
  ASSERT_TRUE(d.writing());
  const lock_record renewal = d.written();
  EXPECT_FALSE(renewal.released);
  EXPECT_EQ(renewal.priority, 7);
  const std::vector<ranked_candidate> ranks{{"y", 2}};
  EXPECT_EQ(renewal.candidates, ranks);
  EXPECT_EQ(renewal.successor, "");
  EXPECT_EQ(renewal.handover, std::nullopt);
}

TEST(ElectionCoreCoordination, WithoutCoordinationRecordsKeepTheirOldShape) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  ASSERT_TRUE(d.writing());
  for (const char* key : {"priority", "candidates", "successor", "handoverMs", "keepOut"}) {
    EXPECT_EQ(d.last.operation->body.find(key), std::string::npos) << key;
  }
  d.write_ok("e1");
  d.stop();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.last.operation->body.find("successor"), std::string::npos) << "nobody to name";
}

TEST(ElectionCoreCoordination, ResigningToANodeNamesIt) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  d.candidates({watcher("y", 1, d.now.steady)});
  d.resign(10s, "y");
  EXPECT_EQ(d.written().successor, "y");
  EXPECT_EQ(d.written().handover, 1s) << "it watches: it hears of the release at once";

  core_driver s3(core_config("a"));
  s3.become_leader("e1");
  s3.resign(10s, "q");
  EXPECT_EQ(s3.written().successor, "q");
  EXPECT_EQ(s3.written().handover, 10s) << "no watch: it reads within 2 F";

  core_driver self(core_config("a"));
  self.become_leader("e1");
  self.candidates({watcher("y", 1, self.now.steady)});
  self.resign(10s, "a");
  EXPECT_EQ(self.written().successor, "y") << "naming ourselves names the best candidate";
}

TEST(ElectionCoreCoordination, AStaleReleasesNamesAreNeverWrittenAgain) {
  core_driver d(core_config("b"));
  d.start();
  lock_record old = decode_record(release_naming("b", 2s, "a")).record.value_or(lock_record{});
  old.priority = 9;
  old.candidates = {{"b", 3}, {"c", 1}};
  d.read(encode_record(old), "er");
  ASSERT_TRUE(d.writing());
  const lock_record taken = d.written();
  EXPECT_EQ(taken.successor, "");
  EXPECT_EQ(taken.keep_out, "");
  EXPECT_EQ(taken.handover, std::nullopt);
  EXPECT_EQ(taken.priority, std::nullopt);
  EXPECT_TRUE(taken.candidates.empty());
  d.write_ok("eb");
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().keep_out, "") << "nor into a renewal";
}

}  // namespace
}  // namespace s3lect::test
