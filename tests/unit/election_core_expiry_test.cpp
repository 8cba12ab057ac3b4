// election_core: the follower expiry rules (b) and (c) of design §4, acting exactly at the
// expiry moment, clock skew both ways, unreadable records; and the frequent/stable modes of §5.
#include "election_core_harness.hpp"

namespace s3lect::test {
namespace {

// A follower that has read `b`'s record with ETag `etag`, written `age` ago on b's wall clock
// which is `b_ahead` ahead of ours.
core_driver follower_seeing(elector_config config, std::chrono::milliseconds age,
                            std::chrono::milliseconds b_ahead = 0ms) {
  core_driver d(std::move(config));
  d.start();
  d.read(foreign_body("b", 3, d.now.wall - age + b_ahead), "eb");
  return d;
}

// ---------------------------------------------------------------------------------------------
// Rule (b): the follower's own monotonic clock, from the first read that returned the ETag.

TEST(ElectionCoreExpiry, RuleBTakesOverExactlyLAfterFirstSight) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_seeing(config, 0ms);
  const steady_time first_seen = d.now.steady;
  EXPECT_FALSE(d.writing());
  // Frequent reads at F all show the same ETag: the leader stopped renewing.
  d.wake();
  EXPECT_EQ(d.now.steady, first_seen + 5s);
  d.read(foreign_body("b", 3, d.now.wall), "eb");
  d.advance(2s);  // the read came back late; the expiry moment does not move
  d.wake();
  ASSERT_TRUE(d.reading());
  d.read(foreign_body("b", 3, d.now.wall), "eb");
  ASSERT_EQ(d.last.wake_at, first_seen + 15s) << "wake at the expiry moment, not the next tick";
  d.advance_to(first_seen + 15s - 1ns);
  d.timer();
  EXPECT_FALSE(d.writing()) << "not a nanosecond early";
  d.advance(1ns);
  d.timer();
  ASSERT_TRUE(d.writing()) << "a takeover at the expiry moment needs no extra read";
  EXPECT_EQ(d.condition().type, put_condition::kind::if_match);
  EXPECT_EQ(d.condition().etag, "eb");
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCoreExpiry, RuleBCountsFromTheFirstReadOfEachNewEtag) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_seeing(config, 0ms);
  d.wake();
  d.read(foreign_body("c", 4, d.now.wall), "ec");  // a new holder, a new ETag
  const steady_time first_seen = d.now.steady;
  for (int i = 0; i < 2; ++i) {
    d.wake();
    d.read(foreign_body("c", 4, d.now.wall), "ec");
  }
  d.wake();
  EXPECT_EQ(d.now.steady, first_seen + 15s);
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, ReadFailuresDoNotResetFirstSight) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_seeing(config, 0ms);
  const steady_time first_seen = d.now.steady;
  d.wake();
  d.read_error(errc::connect_failed);
  EXPECT_EQ(d.core.status().consecutive_failures, 1u);
  d.wake();
  d.read_error(errc::connect_failed);
  EXPECT_EQ(d.core.status().consecutive_failures, 2u);
  d.wake();
  EXPECT_EQ(d.now.steady, first_seen + 15s);
  EXPECT_TRUE(d.writing()) << "If-Match on the ETag seen keeps a stale view safe";
}

TEST(ElectionCoreExpiry, WritersLongerLeaseIsHonoured) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  d.read(foreign_body("b", 3, d.now.wall, "f00df00df00df00d", 40s), "eb");
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(foreign_body("b", 3, d.now.wall, "f00df00df00df00d", 40s), "eb");
  }
  EXPECT_EQ(d.now.steady, first_seen + 40s);
}

TEST(ElectionCoreExpiry, ExpiredTakeoverLostRaceFollowsTheWinner) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_seeing(config, 0ms);
  d.advance(15s);
  d.timer();
  ASSERT_TRUE(d.writing());
  d.write_error(errc::precondition_failed);
  ASSERT_TRUE(d.reading());
  d.read(foreign_body("c", 4, d.now.wall), "ec");
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.core.status().leader_id, "c");
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s) << "a fresh record: wait a whole lease again";
}

// ---------------------------------------------------------------------------------------------
// Rule (c): lastUpdated + L + max_clock_skew on the follower's wall clock.

TEST(ElectionCoreExpiry, RuleCTakesOverALongDeadRecordAtOnce) {
  core_driver d = follower_seeing(core_config("a"), std::chrono::hours{5});
  ASSERT_TRUE(d.writing()) << "a fresh process need not wait a lease for a day-old record";
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCoreExpiry, RuleCBoundaryIsInclusive) {
  core_driver d = follower_seeing(core_config("a"), 17s);  // L + skew exactly
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, RuleCSchedulesTheExactMoment) {
  core_driver d = follower_seeing(core_config("a"), 17s - 1ms);
  EXPECT_FALSE(d.writing());
  ASSERT_EQ(d.last.wake_at, d.now.steady + 1ms);
  d.advance(1ms - 1ns);
  d.timer();
  EXPECT_FALSE(d.writing());
  d.advance(1ns);
  d.timer();
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, RuleCFiresBeforeTheNextPoll) {
  core_driver d = follower_seeing(core_config("a"), 14s);  // expires 3 s from now
  EXPECT_EQ(d.last.wake_at, d.now.steady + 3s);
  d.wake();
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, WriterClockAheadWithinSkewIsSafe) {
  // b's clock is 2 s ahead (= max_clock_skew): its lastUpdated looks 2 s younger. Rule (c)
  // fires L + skew + 2 s after the write in real time; rule (b) at L after first sight wins.
  elector_config config = core_config("a");
  core_driver d = follower_seeing(config, 0ms, 2s);
  const steady_time written = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(foreign_body("b", 3, d.now.wall - (d.now.steady - written) + 2s), "eb");
  }
  EXPECT_EQ(d.now.steady, written + 15s);
}

TEST(ElectionCoreExpiry, WriterClockBehindWithinSkewIsSafe) {
  // b's clock is 2 s behind: lastUpdated looks 2 s older. Rule (c) fires at real L + skew - 2 s
  // = L after the write: never before the writer's lease is over.
  elector_config config = core_config("a");
  core_driver d(config);
  d.start();
  const wall_time b_wrote = d.now.wall - 2s;  // b's wall clock at the write, read right away
  d.advance(1s);
  d.read(foreign_body("b", 3, b_wrote), "eb");
  const steady_time read_at = d.now.steady;
  ASSERT_EQ(d.last.wake_at, read_at + 5s);
  d.wake();
  d.read(foreign_body("b", 3, b_wrote), "eb");
  ASSERT_EQ(d.last.wake_at, read_at + 5s + 5s);
  d.wake();
  d.read(foreign_body("b", 3, b_wrote), "eb");
  // Real write time was read_at - 1 s: rule (c) fires at (read_at - 1 s) + 17 s - 2 s.
  ASSERT_EQ(d.last.wake_at, read_at + 14s);
  d.wake();
  EXPECT_TRUE(d.writing());
  EXPECT_GE(d.now.steady, read_at - 1s + 15s) << "never before the writer's lease ended";
}

TEST(ElectionCoreExpiry, WriterClockBehindBeyondSkewStealsEarlyWhichIsWhyRuleCIsOptional) {
  // Documented hazard: with b's clock 10 s behind, rule (c) believes b's record is 10 s older
  // than it is. Disabling rule (c) (max_clock_skew = nullopt) removes the hazard.
  core_driver with_c = follower_seeing(core_config("a"), 7s, -10s);
  EXPECT_TRUE(with_c.writing()) << "17 s old on our clock, 7 s in reality";

  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver without_c = follower_seeing(config, 7s, -10s);
  EXPECT_FALSE(without_c.writing());
  EXPECT_EQ(without_c.last.wake_at, without_c.now.steady + 5s);
}

TEST(ElectionCoreExpiry, WriterClockAheadBeyondSkewOnlyDelaysRuleC) {
  // b's clock is a minute ahead: its record looks like it comes from the future. Rule (c)
  // never fires early; rule (b) still takes over L after first sight.
  core_driver d = follower_seeing(core_config("a"), 0ms, 60s);
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(foreign_body("b", 3, test_wall_epoch() + 60s), "eb");
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s);
}

TEST(ElectionCoreExpiry, RuleCDisabledTrustsOnlyTheMonotonicClock) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_seeing(config, std::chrono::hours{5});
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s);
}

TEST(ElectionCoreExpiry, MalformedRecordOnlyExpiresByRuleB) {
  elector_config config = core_config("a");
  config.acquire_grace = 1s;
  core_driver d(config);
  d.start();
  d.read("{ this is not json", "ex");
  EXPECT_FALSE(d.writing()) << "an unknown writer may be alive";
  EXPECT_EQ(d.core.status().last_error_code, make_error_code(errc::malformed_record));
  EXPECT_EQ(d.core.status().leader_id, "");
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read("{ this is not json", "ex");
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s);
  EXPECT_EQ(d.condition().etag, "ex");
  EXPECT_EQ(d.written().term, 1u);
  d.write_ok("ea");
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty()) << "expired takeover: grace applies";
  d.advance(1s);
  d.timer();
  EXPECT_EQ(d.last_notices<leadership_gained>().size(), 1u);
}

TEST(ElectionCoreExpiry, RecordWithoutTimestampRuleCannotApplyToMalformed) {
  // A record with an ancient but malformed timestamp is still "unknown writer": rule (b) only.
  core_driver d(core_config("a"));
  d.start();
  d.read(R"({"leaderID":"b","lastUpdated":"yesterday"})", "ex");
  EXPECT_FALSE(d.writing());
}

// ---------------------------------------------------------------------------------------------
// Frequent and stable modes

// Reads b's record with a fresh ETag (a renewal) at the current time.
void read_renewed(core_driver& d, int n, std::uint64_t term = 3, const std::string& id = "b") {
  d.read(foreign_body(id, term, d.now.wall), id + "-e" + std::to_string(n));
}

TEST(ElectionCoreModes, TwoReadsOfTheSameRenewingLeaderMakeItStable) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s);
  d.wake();
  read_renewed(d, 2);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 30s) << "stable: read every I, expiry not scheduled";
  d.wake();
  read_renewed(d, 3);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 30s);
}

TEST(ElectionCoreModes, SameEtagTwiceInFrequentModeIsNotStability) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 1);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  d.wake();
  read_renewed(d, 2);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent) << "one renewal seen so far";
  d.wake();
  read_renewed(d, 3);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
}

TEST(ElectionCoreModes, SameEtagInStableModeMeansTheLeaderStoppedAndAllowsTakeoverAtOnce) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();  // rule (b) alone decides
  core_driver d(config);
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  const std::string body = foreign_body("b", 3, d.now.wall);
  d.wake();  // I = 30 s later
  d.read(body, "b-e2");
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  ASSERT_TRUE(d.writing()) << "first seen 30 s ago, L = 15 s: take over at once";
  EXPECT_EQ(d.condition().etag, "b-e2");
}

TEST(ElectionCoreModes, SameEtagInStableModeWithShortIWaitsForTheRestOfTheLease) {
  elector_config config = core_config("a");
  config.infrequent_interval = 8s;
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  const steady_time first_seen = d.now.steady;
  d.wake();
  read_renewed(d, 2);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s);
  d.wake();
  read_renewed(d, 2);
  EXPECT_EQ(d.last.wake_at, first_seen + 15s);
}

TEST(ElectionCoreModes, LeaderChangeReturnsToFrequent) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  read_renewed(d, 3, 4, "c");
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s);
  ASSERT_EQ(d.last_notices<leader_changed>().size(), 1u);
  EXPECT_EQ(d.last_notices<leader_changed>()[0].leader_id, "c");
  EXPECT_EQ(d.last_notices<leader_changed>()[0].term, 4u);
  d.wake();
  read_renewed(d, 4, 4, "c");
  EXPECT_EQ(d.core.status().mode, poll_mode::stable) << "the change read counts as the first";
}

TEST(ElectionCoreModes, TermChangeOfTheSameLeaderReturnsToFrequent) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  d.wake();
  read_renewed(d, 3, 4);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

TEST(ElectionCoreModes, ReadErrorReturnsToFrequentAndToTheExpiryMoment) {
  elector_config config = core_config("a");
  config.infrequent_interval = 12s;
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  const steady_time first_seen = d.now.steady;
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  d.read_error(errc::throttled);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_EQ(d.core.status().last_error_code, make_error_code(errc::throttled));
  EXPECT_EQ(d.last.wake_at, first_seen + 15s) << "before the next poll at +5 s";
  d.wake();
  ASSERT_TRUE(d.writing()) << "unchanged since first sight L ago, if If-Match holds";
  EXPECT_EQ(d.condition().etag, "b-e2");
}

TEST(ElectionCoreModes, ReleasedRecordInStableModeIsTakenOverAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  d.wake();
  d.read(released_body("b", 3), "b-rel");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 4u);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

TEST(ElectionCoreModes, StaleByRuleCInStableModeIsTrouble) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  d.wake();
  // A new ETag but an old timestamp: the writer's clock is far behind, or it is a stale copy.
  d.read(foreign_body("b", 3, d.now.wall - 20s), "b-e3");
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreModes, AbsentRecordIsTroubleAndTakenAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  d.wake();
  d.read_absent();
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().type, put_condition::kind::if_absent);
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCoreModes, LeaderChangedIsAnnouncedOncePerChange) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  EXPECT_EQ(d.last_notices<leader_changed>().size(), 1u);
  d.wake();
  read_renewed(d, 2);
  EXPECT_TRUE(d.last_notices<leader_changed>().empty()) << "a renewal is no change";
}

TEST(ElectionCoreModes, StableFollowerSeeingAMissedRenewalByTimestampReadsAtTheExpiry) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();  // I = 30 s later
  // The leader crashed 10 s ago right after a renewal: a new ETag, but a stamp older than F plus
  // the allowed skew. Without the hint the follower would wait another I before acting.
  d.read(foreign_body("b", 3, d.now.wall - 10s), "b-last");
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_FALSE(d.writing()) << "no takeover yet: the stamp alone proves nothing";
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s) << "frequent again: next read after F";
}

TEST(ElectionCoreModes, StampWithinFPlusSkewKeepsAStableFollowerStable) {
  core_driver d(core_config("a"));
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  d.read(foreign_body("b", 3, d.now.wall - 7s), "b-e3");  // exactly F + skew: still healthy
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 30s);
}

TEST(ElectionCoreModes, WithoutRuleCTheStampIsNotTrustedForTheModeEither) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  d.read(foreign_body("b", 3, d.now.wall - 10s), "b-last");
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
}

}  // namespace
}  // namespace s3lect::test
