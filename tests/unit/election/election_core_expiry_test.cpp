// election_core: the follower expiry rules (b) and (c) (docs/algorithm.md#expiry-rules), acting
// exactly at the expiry moment, clock skew both ways, unreadable records; and the frequent and
// stable modes (docs/algorithm.md#polling-modes), read by read on the economy schedule (every F,
// then every I); the default first-hand schedule is election_core_first_hand_test.cpp's.
#include "support/election_core_harness.hpp"

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
  elector_config config = economy_config("a");
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
  elector_config config = economy_config("a");
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
  elector_config config = economy_config("a");
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
  elector_config config = economy_config("a");
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
  elector_config config = economy_config("a");
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
// Rule (c): the store's own clock. The answer's Date minus the object's Last-Modified, less
// 2 s for the headers' whole seconds, less max_clock_skew, is time the record has certainly
// aged before the read: L after that, it may be taken. With the defaults (L 15 s, skew 2 s) a
// record is taken at once when Date − Last-Modified ≥ 19 s. No node's wall clock enters.

// A follower whose first read of b's record is dated `store_age` old by the store.
core_driver follower_reading_aged(elector_config config, std::chrono::seconds store_age) {
  core_driver d(std::move(config));
  d.start();
  d.read_aged(foreign_body("b", 3, d.now.wall), "eb", store_age);
  return d;
}

TEST(ElectionCoreExpiry, RuleCTakesOverALongDeadRecordAtOnce) {
  core_driver d = follower_reading_aged(economy_config("a"), std::chrono::hours{5});
  ASSERT_TRUE(d.writing()) << "a fresh process need not wait a lease for a record dead for hours";
  EXPECT_EQ(d.written().term, 4u);
  EXPECT_EQ(d.condition().etag, "eb");
}

TEST(ElectionCoreExpiry, RuleCBoundaryIsInclusive) {
  core_driver d = follower_reading_aged(economy_config("a"), 19s);  // L + skew + 2 s exactly
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, RuleCSchedulesTheExactMoment) {
  core_driver d = follower_reading_aged(economy_config("a"), 18s);
  EXPECT_FALSE(d.writing());
  ASSERT_EQ(d.last.wake_at, d.now.steady + 1s);
  d.advance(1s - 1ns);
  d.timer();
  EXPECT_FALSE(d.writing()) << "not a nanosecond early";
  d.advance(1ns);
  d.timer();
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, RuleCFiresBeforeTheNextPoll) {
  core_driver d = follower_reading_aged(economy_config("a"), 16s);  // expires 3 s from now
  EXPECT_EQ(d.last.wake_at, d.now.steady + 3s);
  d.wake();
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreExpiry, RuleCKeepsTheEarliestDatingOfAnEtag) {
  // The first read dates the record 4 s old (certainly aged 4 − 2 − 2 = 0 s), the second, 5 s
  // later, 16 s old (12 s, so written 7 s before the first read): the earlier evidence wins,
  // and the takeover comes before the next poll.
  core_driver d = follower_reading_aged(economy_config("a"), 4s);
  const steady_time first = d.now.steady;
  ASSERT_EQ(d.last.wake_at, first + 5s);
  d.wake();
  d.read_aged(foreign_body("b", 3, d.now.wall), "eb", 16s);
  EXPECT_EQ(d.last.wake_at, first - 7s + 15s);
}

TEST(ElectionCoreExpiry, NoNodesWallClockMattersToRuleC) {
  // b's lastUpdated says the record is five hours old (b's clock is behind), and our own wall
  // clock is five minutes ahead: the store dates the record as just written. Rule (c) says
  // nothing, rule (b) takes over L after first sight, as if all clocks were right.
  core_driver d(economy_config("a"));
  d.now.wall += 5min;
  d.start();
  const wall_time store_now = d.now.wall - 5min;
  d.read_dated(foreign_body("b", 3, d.now.wall - std::chrono::hours{5}), "eb", store_now,
               store_now);
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) {
      const wall_time date = d.now.wall - 5min;
      d.read_dated(foreign_body("b", 3, d.now.wall - std::chrono::hours{5}), "eb", store_now, date);
    }
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s);
}

TEST(ElectionCoreExpiry, StoreFrontEndsApartByTheSkewStillWaitTheWholeLease) {
  // The front end that answers the reads runs 2 s (= max_clock_skew) ahead of the one that
  // stamped Last-Modified: the record looks 2 s older than it is. Taken over no earlier than
  // L after the write, whichever whole-second phase the write fell on.
  for (const auto phase : {0ms, 1ms, 500ms, 999ms}) {
    core_driver d(economy_config("a"));
    d.start();
    d.advance(phase);
    const steady_time written = d.now.steady;
    const wall_time stamped = d.now.wall;  // Last-Modified: the writer's front end, true time
    d.read_dated(foreign_body("b", 3, stamped), "eb", stamped, d.now.wall + 2s);
    while (!d.writing()) {
      d.wake();
      if (d.reading()) {
        d.read_dated(foreign_body("b", 3, stamped), "eb", stamped, d.now.wall + 2s);
      }
    }
    EXPECT_GE(d.now.steady, written + 15s) << "phase " << phase.count() << " ms";
    EXPECT_LT(d.now.steady, written + 17s) << "and not much later";
  }
}

TEST(ElectionCoreExpiry, WithoutDateOrLastModifiedRuleCIsOffForThatRead) {
  core_driver d(economy_config("a"));
  d.start();
  // An hours-old stamp in the record, but the store sent no dates: rule (b) alone.
  d.read(foreign_body("b", 3, d.now.wall - std::chrono::hours{5}), "eb");
  EXPECT_FALSE(d.writing());
  get_result no_date;
  no_date.found =
      object{foreign_body("b", 3, d.now.wall), "eb", d.now.wall - std::chrono::hours{5}};
  d.advance(1s);
  d.core.on_read_done(d.now, {}, no_date);
  EXPECT_FALSE(d.writing()) << "Last-Modified without Date proves nothing";
}

TEST(ElectionCoreExpiry, RuleCDisabledTrustsOnlyTheMonotonicClock) {
  elector_config config = economy_config("a");
  config.max_clock_skew.reset();
  core_driver d = follower_reading_aged(config, std::chrono::hours{5});
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s);
}

TEST(ElectionCoreExpiry, RuleCDatesAnUnreadableRecordToo) {
  // Rule (c) needs no timestamp from the record: the store's headers date it.
  core_driver d(economy_config("a"));
  d.start();
  d.read_aged("{ this is not json", "ex", std::chrono::hours{1});
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "ex");
}

TEST(ElectionCoreExpiry, UndatedMalformedRecordOnlyExpiresByRuleB) {
  elector_config config = economy_config("a");
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

TEST(ElectionCoreExpiry, ARecordCutAtTheReadLimitIsUnreadableAndTakenOverAfterOneLease) {
  // A lock object over the reader's limit (a 20 MB object): s3_client stops reading and keeps
  // the ETag. Even when the bytes read happen to be a valid record, the object is not one.
  elector_config config = economy_config("a");
  config.acquire_grace = 0s;
  core_driver d(config);
  d.start();
  get_result cut;
  cut.found = object{foreign_body("b", 3, d.now.wall), "big"};
  cut.found->truncated = true;
  d.read_result(cut);
  EXPECT_FALSE(d.writing()) << "an unknown writer may be alive";
  EXPECT_EQ(d.core.status().last_error_code, make_error_code(errc::malformed_record));
  EXPECT_NE(d.core.status().last_error.find("the read stopped there"), std::string::npos)
      << d.core.status().last_error;
  EXPECT_EQ(d.core.status().leader_id, "");
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read_result(cut);
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s) << "one lease after first sight";
  EXPECT_EQ(d.condition().etag, "big") << "the takeover is conditional on the ETag read";
}

TEST(ElectionCoreExpiry, AMalformedTimestampIsNoEvidenceOfAge) {
  // A record with an ancient but malformed timestamp is still "unknown writer": rule (b) only.
  core_driver d(economy_config("a"));
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

// Starts d and reads two renewals of b's record, one frequent interval apart: b is then stable.
void start_and_read_two_renewals(core_driver& d) {
  d.start();
  read_renewed(d, 1);
  d.wake();
  read_renewed(d, 2);
}

TEST(ElectionCoreModes, TwoReadsOfTheSameRenewingLeaderMakeItStable) {
  core_driver d(economy_config("a"));
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
  core_driver d(economy_config("a"));
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
  elector_config config = economy_config("a");
  config.max_clock_skew.reset();  // rule (b) alone decides
  core_driver d(config);
  start_and_read_two_renewals(d);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  const std::string body = foreign_body("b", 3, d.now.wall);
  d.wake();  // I = 30 s later
  d.read(body, "b-e2");
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  ASSERT_TRUE(d.writing()) << "first seen 30 s ago, L = 15 s: take over at once";
  EXPECT_EQ(d.condition().etag, "b-e2");
}

TEST(ElectionCoreModes, SameEtagInStableModeWithShortIWaitsForTheRestOfTheLease) {
  elector_config config = economy_config("a");
  config.infrequent_interval = 8s;
  config.max_clock_skew.reset();
  core_driver d(config);
  start_and_read_two_renewals(d);
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
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
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
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  d.wake();
  read_renewed(d, 3, 4);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

TEST(ElectionCoreModes, ReadErrorReturnsToFrequentAndToTheExpiryMoment) {
  elector_config config = economy_config("a");
  config.infrequent_interval = 12s;
  config.max_clock_skew.reset();
  core_driver d(config);
  start_and_read_two_renewals(d);
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
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  d.wake();
  d.read(released_body("b", 3), "b-rel");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 4u);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

TEST(ElectionCoreModes, DatedStaleByRuleCInStableModeIsTrouble) {
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  d.wake();
  // A new ETag, but the store dates it 20 s old: the leader wrote it and died.
  d.read_aged(foreign_body("b", 3, d.now.wall), "b-e3", 20s);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_TRUE(d.writing());
}

TEST(ElectionCoreModes, AbsentRecordIsTroubleAndTakenAtOnce) {
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  d.wake();
  d.read_absent();
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().type, put_condition::kind::if_absent);
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCoreModes, LeaderChangedIsAnnouncedOncePerChange) {
  core_driver d(economy_config("a"));
  d.start();
  read_renewed(d, 1);
  EXPECT_EQ(d.last_notices<leader_changed>().size(), 1u);
  d.wake();
  read_renewed(d, 2);
  EXPECT_TRUE(d.last_notices<leader_changed>().empty()) << "a renewal is no change";
}

TEST(ElectionCoreModes, StableFollowerSeeingAMissedRenewalByStoreDateReadsAtTheExpiry) {
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();  // I = 30 s later
  // The leader crashed right after a renewal: a new ETag, but the store dates it 10 s old (at
  // least 6 s: more than F). Without the hint the follower would wait another I before acting.
  d.read_aged(foreign_body("b", 3, d.now.wall), "b-last", 10s);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_FALSE(d.writing()) << "no takeover yet: the stamp alone proves nothing";
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s) << "frequent again: next read after F";
}

TEST(ElectionCoreModes, StoreAgeWithinFKeepsAStableFollowerStable) {
  core_driver d(economy_config("a"));
  start_and_read_two_renewals(d);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  // Dated 9 s old: at least 9 − 2 − 2 = 5 s, exactly F: still healthy.
  d.read_aged(foreign_body("b", 3, d.now.wall - std::chrono::hours{1}), "b-e3", 9s);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 30s);
}

TEST(ElectionCoreModes, WithoutRuleCTheStoreAgeIsNotTrustedForTheModeEither) {
  elector_config config = economy_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  start_and_read_two_renewals(d);
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  d.wake();
  d.read_aged(foreign_body("b", 3, d.now.wall), "b-last", 20s);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
}

}  // namespace
}  // namespace s3lect::test
