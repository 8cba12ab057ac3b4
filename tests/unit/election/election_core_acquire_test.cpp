// election_core: how a follower acquires the lock (absent, released, in doubt), which term it
// writes, and the acquire grace. No sockets, no sleeps: a fake clock.
#include "support/election_core_harness.hpp"

namespace s3lect::test {
namespace {

TEST(ElectionCoreAcquire, StartReadsTheLockFirst) {
  core_driver d(core_config("a"));
  EXPECT_EQ(d.core.role(), core_role::stopped);
  d.start();
  EXPECT_TRUE(d.reading());
  EXPECT_FALSE(d.last.wake_at) << "nothing to wake for while the read is in flight";
  EXPECT_EQ(d.core.role(), core_role::follower);
}

TEST(ElectionCoreAcquire, AbsentRecordIsCreatedIfAbsentWithTermOne) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().type, put_condition::kind::if_absent);
  const lock_record r = d.written();
  EXPECT_EQ(r.leader_id, "a");
  EXPECT_EQ(r.leader_addr, "a.local:8443");
  EXPECT_EQ(r.term, 1u);
  EXPECT_EQ(r.lease, std::optional<std::chrono::milliseconds>(15s));
  EXPECT_FALSE(r.released);
  EXPECT_EQ(r.nonce.size(), 16u);
  EXPECT_EQ(r.last_updated, d.now.wall);
  EXPECT_EQ(d.core.role(), core_role::candidate);
}

TEST(ElectionCoreAcquire, SuccessReportsLeadershipAndSchedulesRenewalAtSendPlusF) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time sent = d.now.steady;
  d.advance(300ms);  // the PUT takes a while: S is when it was sent, not when it answered
  d.write_ok("e1");
  ASSERT_EQ(d.last_notices<leadership_gained>().size(), 1u);
  EXPECT_EQ(d.last_notices<leadership_gained>()[0].term, 1u);
  const auto changed = d.last_notices<leader_changed>();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].leader_id, "a");
  EXPECT_EQ(changed[0].term, 1u);
  EXPECT_TRUE(d.core.is_leader());
  EXPECT_EQ(d.core.role(), core_role::leader);
  EXPECT_EQ(d.last.wake_at, sent + 5s);
  EXPECT_EQ(d.core.leadership_deadline(), sent + 10s);
  ASSERT_NE(d.core.held_record(), nullptr);
  EXPECT_EQ(d.core.held_record()->term, 1u);
}

TEST(ElectionCoreAcquire, LostRaceRereadsAtOnceAndFollows) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  d.write_error(errc::precondition_failed);
  EXPECT_TRUE(d.reading()) << "a 412 means someone else wrote: read who";
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  d.read(foreign_body("b", 1, d.now.wall), "eb");
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.core.status().leader_id, "b");
  EXPECT_EQ(d.core.role(), core_role::follower);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 2500ms) << "the next read, F / 2 later (first-hand)";
}

TEST(ElectionCoreAcquire, AbsentAfterSeeingTermsContinuesAboveThem) {
  core_driver d(core_config("a"));
  d.start();
  d.read(foreign_body("b", 7, d.now.wall), "eb");
  d.wake();
  ASSERT_TRUE(d.reading());
  d.read_absent();  // someone deleted the record
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 8u) << "terms never go back, even over a deleted record";
}

TEST(ElectionCoreAcquire, ReleasedRecordIsTakenOverAtOnceWithNextTermAndNoGrace) {
  elector_config config = core_config("a");
  config.acquire_grace = 3s;
  core_driver d(config);
  d.start();
  d.read(released_body("b", 41), "er");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().type, put_condition::kind::if_match);
  EXPECT_EQ(d.condition().etag, "er");
  EXPECT_EQ(d.written().term, 42u);
  d.write_ok("ea");
  EXPECT_EQ(d.last_notices<leadership_gained>().size(), 1u) << "no grace after a release";
}

TEST(ElectionCoreAcquire, GoZeroTimeRecordIsReleased) {
  core_driver d(core_config("a"));
  d.start();
  d.read(R"({"leaderID":"go-1","leaderAddr":"10.0.0.1:8443","lastUpdated":"0001-01-01T00:00:00Z"})",
         "ego");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "ego");
  EXPECT_EQ(d.written().term, 1u) << "Go records count as term 0";
}

TEST(ElectionCoreAcquire, GoRecordHeldIsRespectedUntilItExpires) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  d.read(R"({"leaderID":"go-1","leaderAddr":"10.0.0.1:8443","lastUpdated":"2026-11-21T09:59:59Z"})",
         "ego");
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.core.status().leader_id, "go-1");
  EXPECT_EQ(d.core.status().leader_addr, "10.0.0.1:8443");
  EXPECT_EQ(d.core.status().term, 0u);
  const steady_time first_seen = d.now.steady;
  for (int reads = 0; reads < 20 && !d.writing(); ++reads) {
    d.wake();
    if (d.reading()) d.read(R"({"leaderID":"go-1","lastUpdated":"2026-11-21T09:59:59Z"})", "ego");
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s);
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 1u);
}

TEST(ElectionCoreAcquire, InDoubtAcquisitionWithOurNonceIsAWin) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const std::string body = d.last.operation->body;
  const steady_time sent = d.now.steady;
  d.advance(2s);
  d.write_error(errc::outcome_unknown);
  EXPECT_TRUE(d.reading()) << "never assume a win: re-read";
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  EXPECT_EQ(d.core.role(), core_role::candidate);
  d.advance(1s);
  d.read(body, "e1");
  ASSERT_EQ(d.last_notices<leadership_gained>().size(), 1u);
  EXPECT_EQ(d.core.leadership_deadline(), sent + 10s) << "S is the send time of the write";
  EXPECT_EQ(d.last.wake_at, sent + 5s);
}

TEST(ElectionCoreAcquire, InDoubtAcquisitionWithForeignNonceIsALoss) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  d.write_error(errc::timeout);
  ASSERT_TRUE(d.reading());
  d.read(foreign_body("b", 1, d.now.wall), "eb");
  EXPECT_FALSE(d.core.is_leader());
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.core.role(), core_role::follower);
}

TEST(ElectionCoreAcquire, InDoubtAcquisitionConfirmedTooLateIsANewTerm) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const std::string body = d.last.operation->body;
  const steady_time sent = d.now.steady;
  d.write_error(errc::conflict);
  ASSERT_TRUE(d.reading());
  d.read_error(errc::timeout);
  d.advance_to(sent + 10s);  // past its renew deadline: that leadership never counted
  d.timer();
  ASSERT_TRUE(d.reading());
  d.read(body, "e1");
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  ASSERT_TRUE(d.writing()) << "our own dead record: take it over at once";
  EXPECT_EQ(d.condition().etag, "e1");
  EXPECT_EQ(d.written().term, 2u);
  d.write_ok("e2");
  ASSERT_EQ(d.last_notices<leadership_gained>().size(), 1u);
  EXPECT_EQ(d.last_notices<leadership_gained>()[0].term, 2u);
}

TEST(ElectionCoreAcquire, InDoubtAcquisitionNotLandedRetriesAfterAPauseKeepingFirstSight) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  d.read(foreign_body("b", 3, d.now.wall), "eb");
  const steady_time first_seen = d.now.steady;
  d.advance_to(first_seen + 15s);
  d.timer();
  ASSERT_TRUE(d.writing());
  d.write_error(errc::server_error);  // e.g. Ceph's 500 for a lost race, or a real 5xx
  ASSERT_TRUE(d.reading());
  d.read(foreign_body("b", 3, d.now.wall), "eb");  // unchanged: our write did not land
  EXPECT_FALSE(d.writing()) << "pause before trying again";
  ASSERT_TRUE(d.last.wake_at);
  EXPECT_EQ(*d.last.wake_at, first_seen + 15s + 1s) << "the retry policy's longest delay";
  d.wake();
  ASSERT_TRUE(d.writing()) << "the record was first seen 15 s ago: no new wait of L";
  EXPECT_EQ(d.condition().etag, "eb");
}

TEST(ElectionCoreAcquire, SameServerIdWithUnknownNonceIsAnotherHolder) {
  // A restart of "a" inside the lease of its previous incarnation: no silent leadership.
  core_driver d(core_config("a"));
  d.start();
  d.read(foreign_body("a", 5, d.now.wall, "0000000000000001"), "eold");
  EXPECT_FALSE(d.writing());
  EXPECT_FALSE(d.core.is_leader());
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  EXPECT_EQ(d.core.status().leader_id, "a");
  EXPECT_EQ(d.core.role(), core_role::follower);
}

TEST(ElectionCoreAcquire, SameServerIdTakesOverItsOldRecordOnlyWhenItExpires) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  d.read(foreign_body("a", 5, d.now.wall, "0000000000000001"), "eold");
  const steady_time first_seen = d.now.steady;
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(foreign_body("a", 5, d.now.wall, "0000000000000001"), "eold");
  }
  EXPECT_EQ(d.now.steady, first_seen + 15s);
  EXPECT_EQ(d.written().term, 6u) << "a new incarnation is a new term";
}

// ---------------------------------------------------------------------------------------------
// Acquire grace

// a's configuration with an acquire grace and no store-clock margin.
elector_config grace_config(std::chrono::seconds grace) {
  elector_config config = core_config("a");
  config.acquire_grace = grace;
  config.max_clock_skew.reset();
  return config;
}

// Starts d, reads b's record and lets a lease pass: d then writes its takeover.
void take_over_an_expired_record(core_driver& d) {
  d.start();
  d.read(foreign_body("b", 3, d.now.wall), "eb");
  d.advance(15s);
  d.timer();
}

TEST(ElectionCoreGrace, ExpiredTakeoverHoldsAndRenewsButReportsAfterGrace) {
  core_driver d(grace_config(7s));
  take_over_an_expired_record(d);
  ASSERT_TRUE(d.writing());
  const steady_time sent = d.now.steady;
  d.advance(200ms);
  d.write_ok("ea1");
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  EXPECT_EQ(d.core.role(), core_role::holding);
  EXPECT_FALSE(d.core.is_leader());
  ASSERT_EQ(d.last_notices<leader_changed>().size(), 1u) << "the record names us already";
  const steady_time report_at = d.now.steady + 7s;

  d.wake();  // the renewal comes first, at S + F
  EXPECT_EQ(d.now.steady, sent + 5s);
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "ea1");
  EXPECT_EQ(d.written().term, 4u);
  d.write_ok("ea2");
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  d.wake();
  EXPECT_EQ(d.now.steady, report_at) << "the grace runs from the confirmed acquisition";
  ASSERT_EQ(d.last_notices<leadership_gained>().size(), 1u);
  EXPECT_EQ(d.last_notices<leadership_gained>()[0].term, 4u);
  EXPECT_TRUE(d.core.is_leader());
}

TEST(ElectionCoreGrace, AbsentRecordNeedsNoGrace) {
  elector_config config = core_config("a");
  config.acquire_grace = 7s;
  core_driver d(config);
  d.become_leader();
  EXPECT_EQ(d.all_notices<leadership_gained>().size(), 1u);
}

TEST(ElectionCoreGrace, DemotionDuringGraceReportsNothing) {
  core_driver d(grace_config(9s));
  take_over_an_expired_record(d);
  d.write_ok("ea1");
  d.wake();
  ASSERT_TRUE(d.writing());
  d.write_error(errc::precondition_failed);
  EXPECT_TRUE(d.last_notices<leadership_lost>().empty());
  EXPECT_TRUE(d.all_notices<leadership_gained>().empty());
  EXPECT_EQ(d.core.role(), core_role::follower);
}

}  // namespace
}  // namespace s3lect::test
