// election_core as leader: renewals every F from S with If-Match and no GET, the outcomes of a
// renewal (412, in doubt with our nonce or another's), self-demotion exactly at S + D, and the
// new term after a demotion.
#include "support/election_core_harness.hpp"

namespace s3lect::test {
namespace {

TEST(ElectionCoreLeader, RenewsEveryFWithIfMatchAndNoRead) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  steady_time sent = d.now.steady;
  d.write_ok("e1");
  std::string etag = "e1";
  std::string previous_nonce;
  for (int i = 2; i < 8; ++i) {
    d.wake();
    EXPECT_EQ(d.now.steady, sent + 5s);
    ASSERT_TRUE(d.writing()) << "no GET before a renewal";
    EXPECT_EQ(d.condition().type, put_condition::kind::if_match);
    EXPECT_EQ(d.condition().etag, etag);
    const lock_record r = d.written();
    EXPECT_EQ(r.term, 1u) << "renewals keep the term";
    EXPECT_EQ(r.leader_id, "a");
    EXPECT_EQ(r.last_updated, d.now.wall);
    EXPECT_NE(r.nonce, previous_nonce) << "every write its own body and ETag";
    previous_nonce = r.nonce;
    sent = d.now.steady;
    d.advance(100ms * i);  // latency varies; the schedule follows send times
    etag = "e" + std::to_string(i);
    d.write_ok(etag);
    EXPECT_TRUE(d.last.notices.empty());
    EXPECT_EQ(d.core.leadership_deadline(), sent + 10s);
  }
  EXPECT_EQ(d.all_notices<leadership_gained>().size(), 1u);
  EXPECT_EQ(d.core.status().etag, etag);
  EXPECT_EQ(d.core.status().last_renewal, sent);
}

TEST(ElectionCoreLeader, ARenewalGoesEarlyToAClockProbeWithinAQuarterOfF) {
  elector_config config = core_config("a");
  config.frequent_interval = 2s;  // a quarter: 500 ms
  core_driver d(config);
  d.start();
  d.read_absent();
  const steady_time sent = d.now.steady;
  d.write_ok("e1");
  // The store's second ticks over at sent + 0.8 s + n s: the renewal due at sent + 2 s goes at
  // sent + 1.8 s, 200 ms early.
  d.core.set_clock_probe(sent + 800ms);
  d.timer();
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.now.steady, sent + 1800ms);
  const steady_time second = d.now.steady;
  d.write_ok("e2");
  // Now the nearest such moment before the due time is 700 ms early: more than a quarter of F,
  // so the renewal keeps its time.
  d.core.set_clock_probe(second + 300ms);
  d.timer();
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.now.steady, second + 2s);
  d.write_ok("e3");
  d.core.set_clock_probe(std::nullopt);
  const steady_time third = d.now.steady;
  d.timer();
  d.wake();
  EXPECT_EQ(d.now.steady, third + 2s) << "no probe wanted: every F";
}

TEST(ElectionCoreLeader, WithFOfFourSecondsOrMoreEveryRenewalCanProbe) {
  core_driver d(core_config("a"));  // F = 5 s: up to 1 s early
  d.start();
  d.read_absent();
  const steady_time sent = d.now.steady;
  d.write_ok("e1");
  d.core.set_clock_probe(sent + 5s + 1ms);  // just after the due time: 999 ms early
  d.timer();
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.now.steady, sent + 4s + 1ms);
}

TEST(ElectionCoreLeader, PreconditionFailedOnRenewalDemotesAtOnce) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  ASSERT_TRUE(d.writing());
  d.write_error(errc::precondition_failed);
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::superseded);
  EXPECT_EQ(lost[0].term, 1u);
  EXPECT_FALSE(d.core.is_leader());
  EXPECT_FALSE(d.core.leadership_deadline());
  EXPECT_TRUE(d.reading()) << "find out who holds it now";
  d.read(foreign_body("b", 2, d.now.wall), "eb");
  EXPECT_EQ(d.core.status().leader_id, "b");
  EXPECT_FALSE(d.writing());
}

TEST(ElectionCoreLeader, RenewalInDoubtWithOurNonceIsASuccess) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  const std::string body = d.last.operation->body;
  const steady_time sent = d.now.steady;
  d.advance(2s);
  d.write_error(errc::timeout);
  EXPECT_TRUE(d.reading());
  EXPECT_TRUE(d.core.is_leader()) << "still leader until S + D";
  d.advance(500ms);
  d.read(body, "e2");
  EXPECT_TRUE(d.core.is_leader());
  EXPECT_TRUE(d.last.notices.empty());
  EXPECT_EQ(d.core.leadership_deadline(), sent + 10s);
  EXPECT_EQ(d.last.wake_at, sent + 5s);
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e2") << "renew from the ETag the re-read returned";
}

TEST(ElectionCoreLeader, RenewalInDoubtWithForeignNonceDemotes) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  d.write_error(errc::outcome_unknown);
  ASSERT_TRUE(d.reading());
  d.read(foreign_body("b", 2, d.now.wall), "eb");
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::superseded);
  EXPECT_EQ(d.core.status().leader_id, "b");
}

TEST(ElectionCoreLeader, RenewalConflictThatDidNotLandIsRetriedAfterAPause) {
  core_driver d(core_config("a"));
  const std::string first_body = [&] {
    d.start();
    d.read_absent();
    return d.last.operation->body;
  }();
  const steady_time s = d.now.steady;
  d.write_ok("e1");
  d.wake();
  d.write_error(errc::conflict);
  ASSERT_TRUE(d.reading());
  d.read(first_body, "e1");  // our previous record, unchanged
  EXPECT_TRUE(d.core.is_leader());
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.last.wake_at, d.now.steady + 1s);
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e1");
  EXPECT_EQ(d.core.leadership_deadline(), s + 10s) << "S has not moved";
}

TEST(ElectionCoreLeader, RenewalFailureWithFailedVerifyRetriesUntilTheDeadline) {
  core_driver d(core_config("a"));
  d.become_leader();
  const steady_time s = d.now.steady;
  int writes = 0;
  while (d.core.is_leader()) {
    if (d.writing()) {
      ++writes;
      d.write_error(errc::connect_failed);
    } else if (d.reading()) {
      d.read_error(errc::connect_failed);
    } else {
      d.wake();
    }
  }
  EXPECT_EQ(writes, 5) << "at S + 5, 6, 7, 8, 9 s: one per retry pause";
  EXPECT_EQ(d.now.steady, s + 10s) << "demoted exactly at S + D";
  const auto lost = d.all_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::renew_deadline);
  EXPECT_GT(d.core.status().consecutive_failures, 2u);
}

TEST(ElectionCoreLeader, SelfDemotionExactlyAtSPlusDWhileTheRenewalHangs) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time s = d.now.steady;
  d.write_ok("e1");
  d.wake();
  ASSERT_TRUE(d.writing());
  ASSERT_EQ(d.last.wake_at, s + 10s) << "the deadline is armed while the renewal is in flight";
  d.advance_to(s + 10s - 1ns);
  d.timer();
  EXPECT_TRUE(d.core.is_leader()) << "not before S + D";
  EXPECT_TRUE(d.last.notices.empty());
  d.advance(1ns);
  d.timer();
  EXPECT_FALSE(d.core.is_leader()) << "not a tick after S + D";
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::renew_deadline);
  EXPECT_TRUE(d.last.cancel_operation) << "the hanging renewal is abandoned";
  EXPECT_FALSE(d.last.operation) << "one operation at a time: wait for the cancelled one";
  EXPECT_FALSE(d.last.wake_at);
  d.aborted_write();
  EXPECT_TRUE(d.reading()) << "learn what became of the record";
  EXPECT_EQ(d.core.status().consecutive_failures, 0u) << "our own cancellation is no failure";
}

TEST(ElectionCoreLeader, AfterSelfDemotionOwnRecordIsRetakenWithANewTerm) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const std::string body = d.last.operation->body;
  d.write_ok("e1");
  d.wake();
  d.advance(5s);
  d.timer();  // S + D: demoted while the renewal hangs
  ASSERT_FALSE(d.core.is_leader());
  d.aborted_write();
  ASSERT_TRUE(d.reading());
  d.read(body, "e1");  // the renewal never landed, nobody else wrote
  ASSERT_TRUE(d.writing()) << "we know nobody leads under our own dead record";
  EXPECT_EQ(d.condition().etag, "e1");
  EXPECT_EQ(d.written().term, 2u) << "a new term even for the same holder";
  d.write_ok("e3");
  const auto gained = d.last_notices<leadership_gained>();
  ASSERT_EQ(gained.size(), 1u);
  EXPECT_EQ(gained[0].term, 2u);
}

TEST(ElectionCoreLeader, RenewalLandingAfterTheDeadlineDoesNotRevive) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  d.advance(5s);  // S + D while the renewal hangs
  d.timer();
  ASSERT_TRUE(d.last.cancel_operation);
  d.write_ok("e2");  // the cancel came too late: the renewal did land
  EXPECT_FALSE(d.core.is_leader());
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty());
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e2");
  EXPECT_EQ(d.written().term, 2u);
}

TEST(ElectionCoreLeader, RenewalAnsweredExactlyAtTheDeadlineStillDemotes) {
  // The answer and the timer race at S + D; the answer must not extend a leadership that ended.
  core_driver d(core_config("a"));
  const std::string etag = d.become_leader();
  (void)etag;
  const steady_time s = *d.core.leadership_deadline() - 10s;
  d.wake();
  d.advance_to(s + 10s);
  d.write_ok("e2");
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::renew_deadline);
  EXPECT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 2u);
}

TEST(ElectionCoreLeader, DemotionHappensBeforeAnyFollowerMayTakeOver) {
  // Leader a and follower b on synchronised clocks. a's store access hangs after its last
  // successful renewal at S; b reads that record. b's earliest takeover is S + L or later,
  // a demotes itself at S + D, L - D = 5 s before.
  core_driver a(core_config("a"));
  core_driver b(core_config("b"));
  a.start();
  a.read_absent();
  const std::string body = a.last.operation->body;
  const steady_time s = a.now.steady;
  b.now = a.now;
  a.write_ok("e1");
  b.start();
  b.advance(50ms);  // b reads right after the write landed
  b.read(body, "e1");
  while (!b.writing()) {
    b.wake();
    if (b.reading()) b.read(body, "e1");
  }
  const steady_time takeover = b.now.steady;
  EXPECT_GE(takeover, s + 15s);

  a.wake();  // the renewal that hangs
  a.wake();
  ASSERT_EQ(a.all_notices<leadership_lost>().size(), 1u);
  EXPECT_EQ(a.now.steady, s + 10s);
  EXPECT_LE(a.now.steady + 5s, takeover);
}

TEST(ElectionCoreLeader, VerifyReadShowingAnOlderWriteOfOursDemotesForGood) {
  // A store that goes back in time (it should not): our older record is no proof of our
  // latest renewal. Demote, then take the record over like any dead record of ours.
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const std::string first_body = d.last.operation->body;
  d.write_ok("e1");
  d.wake();
  d.write_ok("e2");
  d.wake();
  d.write_error(errc::outcome_unknown);
  ASSERT_TRUE(d.reading());
  d.read(first_body, "e1");
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::superseded);
  EXPECT_TRUE(d.last_notices<leadership_gained>().empty()) << "the old term does not come back";
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e1");
  EXPECT_EQ(d.written().term, 2u);
}

// ---------------------------------------------------------------------------------------------
// Terms

TEST(ElectionCoreTerms, TermChangesOnlyWithTheHolder) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  for (int i = 0; i < 5; ++i) {
    d.wake();
    EXPECT_EQ(d.written().term, 1u);
    d.write_ok("e" + std::to_string(i + 2));
  }
  d.wake();
  d.write_error(errc::precondition_failed);
  d.read(foreign_body("b", 2, d.now.wall), "eb1");
  EXPECT_EQ(d.core.status().term, 2u);
  d.wake();
  d.read(released_body("b", 2), "eb2");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 3u);
  d.write_ok("e9");
  const auto gained = d.all_notices<leadership_gained>();
  ASSERT_EQ(gained.size(), 2u);
  EXPECT_LT(gained[0].term, gained[1].term);
}

// ---------------------------------------------------------------------------------------------
// Stop and resign

TEST(ElectionCoreStop, LeaderReportsLossFirstThenReleasesWithSameTerm) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  d.advance(1s);
  d.stop();
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::stopped);
  EXPECT_FALSE(d.core.is_leader()) << "leader work stops before others may take over";
  EXPECT_EQ(d.core.role(), core_role::stopping);
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e1");
  const lock_record r = d.written();
  EXPECT_TRUE(r.released);
  EXPECT_EQ(r.term, 1u);
  d.write_ok("erel");
  ASSERT_EQ(d.last_notices<release_finished>().size(), 1u);
  EXPECT_TRUE(d.last_notices<release_finished>()[0].released);
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
  EXPECT_EQ(d.core.role(), core_role::stopped);
  EXPECT_FALSE(d.last.wake_at);
  EXPECT_FALSE(d.last.operation);
}

TEST(ElectionCoreStop, ReleaseFailureJustStops) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.stop();
  d.write_error(errc::precondition_failed);
  EXPECT_FALSE(d.last_notices<release_finished>().at(0).released);
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
  EXPECT_FALSE(d.last.operation);
}

TEST(ElectionCoreStop, StopDuringRenewalWaitsForItThenReleasesFromTheNewEtag) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  ASSERT_TRUE(d.writing());
  d.stop();
  EXPECT_EQ(d.last_notices<leadership_lost>().size(), 1u);
  EXPECT_FALSE(d.last.cancel_operation);
  EXPECT_FALSE(d.last.operation);
  d.write_ok("e2");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e2");
  EXPECT_TRUE(d.written().released);
}

TEST(ElectionCoreStop, FollowerReadInFlightIsCancelled) {
  core_driver d(core_config("a"));
  d.start();
  d.stop();
  EXPECT_TRUE(d.last.cancel_operation);
  EXPECT_TRUE(d.last_notices<detail::core_stopped>().empty()) << "wait for the completion";
  d.aborted_read();
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
  EXPECT_EQ(d.core.role(), core_role::stopped);
}

TEST(ElectionCoreStop, IdleFollowerStopsAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  d.read(foreign_body("b", 1, d.now.wall), "eb");
  d.stop();
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
  EXPECT_FALSE(d.last.operation);
  EXPECT_FALSE(d.last.wake_at);
}

TEST(ElectionCoreStop, StopDuringAcquisitionReleasesIfItWon) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  d.stop();
  EXPECT_FALSE(d.last.cancel_operation);
  d.write_ok("e1");
  EXPECT_TRUE(d.all_notices<leadership_gained>().empty());
  ASSERT_TRUE(d.writing());
  EXPECT_TRUE(d.written().released);
}

TEST(ElectionCoreStop, StopDuringAcquisitionInDoubtResolvesItThenReleases) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const std::string body = d.last.operation->body;
  d.stop();
  d.write_error(errc::outcome_unknown);
  ASSERT_TRUE(d.reading()) << "one read to find out whether there is anything to release";
  d.read(body, "e1");
  EXPECT_TRUE(d.all_notices<leadership_gained>().empty());
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.condition().etag, "e1");
  EXPECT_TRUE(d.written().released);
  d.write_ok("erel");
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
}

TEST(ElectionCoreStop, StopDuringAcquisitionInDoubtGivesUpIfTheReadFails) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  d.stop();
  d.write_error(errc::timeout);
  ASSERT_TRUE(d.reading());
  d.read_error(errc::timeout);
  EXPECT_EQ(d.last_notices<detail::core_stopped>().size(), 1u);
  EXPECT_FALSE(d.last.operation);
}

TEST(ElectionCoreStop, CanStartAgainAndDoesNotResumeOldWrites) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  d.stop();
  d.write_ok("erel");
  d.start();
  EXPECT_TRUE(d.reading());
  d.read(released_body("a", 1), "erel");
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().term, 2u);
}

TEST(ElectionCoreResign, ReleasesAndHoldsOffThenCampaignsAgain) {
  core_driver d(core_config("a"));
  d.become_leader("e1");
  d.resign(20s);
  const auto lost = d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::resigned);
  ASSERT_TRUE(d.writing());
  EXPECT_TRUE(d.written().released);
  const std::string released = d.last.operation->body;
  const steady_time resigned_at = d.now.steady;
  d.write_ok("erel");
  ASSERT_EQ(d.last_notices<release_finished>().size(), 1u);
  EXPECT_TRUE(d.last_notices<release_finished>()[0].released);
  EXPECT_FALSE(d.writing()) << "not our own released record right back";
  EXPECT_EQ(d.core.role(), core_role::follower);
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(released, "erel");
  }
  EXPECT_EQ(d.now.steady, resigned_at + 20s);
  EXPECT_EQ(d.written().term, 2u);
}

TEST(ElectionCoreResign, FollowerResignFinishesAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  d.read(foreign_body("b", 1, d.now.wall), "eb");
  d.resign(1s);
  ASSERT_EQ(d.last_notices<release_finished>().size(), 1u);
  EXPECT_FALSE(d.last_notices<release_finished>()[0].released);
  EXPECT_TRUE(d.last_notices<leadership_lost>().empty());
}

TEST(ElectionCoreResign, ResignDuringGraceWritesReleaseWithoutReports) {
  elector_config config = core_config("a");
  config.acquire_grace = 5s;
  config.max_clock_skew.reset();
  core_driver d(config);
  d.start();
  d.read(foreign_body("b", 1, d.now.wall), "eb");
  d.advance(15s);
  d.timer();
  d.write_ok("ea");
  ASSERT_EQ(d.core.role(), core_role::holding);
  d.resign(1s);
  EXPECT_TRUE(d.last_notices<leadership_lost>().empty());
  ASSERT_TRUE(d.writing());
  EXPECT_TRUE(d.written().released);
  d.write_ok("erel");
  EXPECT_TRUE(d.all_notices<leadership_gained>().empty());
}

// ---------------------------------------------------------------------------------------------
// Configuration and status

TEST(ElectionCoreConfig, UpdateAppliesNewIntervalsAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time s = d.now.steady;
  d.write_ok("e1");
  elector_config faster = core_config("a");
  faster.frequent_interval = 2s;
  faster.renew_deadline = 8s;
  faster.retry.delays = {100ms};
  faster.request_timeout = 1s;
  d.update(faster);
  EXPECT_EQ(d.last.wake_at, s + 2s);
  EXPECT_EQ(d.core.leadership_deadline(), s + 8s);
}

TEST(ElectionCoreConfig, UpdateShorteningTheDeadlineDemotesAtOnce) {
  core_driver d(core_config("a"));
  d.become_leader();
  d.wake();
  d.write_error(errc::timeout);
  d.read_error(errc::timeout);
  d.advance(3s);  // S + 8 s
  elector_config shorter = core_config("a");
  shorter.lease = 9s;
  shorter.renew_deadline = 7s;
  shorter.frequent_interval = 3s;
  shorter.retry.delays = {};
  shorter.request_timeout = 1s;
  d.update(shorter);
  ASSERT_EQ(d.last_notices<leadership_lost>().size(), 1u);
  EXPECT_EQ(d.last_notices<leadership_lost>()[0].reason, loss_reason::renew_deadline);
}

TEST(ElectionCoreStatus, ReportsTheView) {
  core_driver d(core_config("a"));
  d.start();
  d.read(foreign_body("b", 3, d.now.wall), "eb");
  detail::core_status st = d.core.status();
  EXPECT_EQ(st.role, core_role::follower);
  EXPECT_EQ(st.leader_id, "b");
  EXPECT_EQ(st.leader_addr, "b.local:8443");
  EXPECT_EQ(st.term, 3u);
  EXPECT_EQ(st.etag, "eb");
  EXPECT_EQ(st.mode, poll_mode::frequent);
  EXPECT_EQ(st.leader_last_seen, d.now.wall);
  EXPECT_EQ(st.last_election_time, d.now.wall);
  EXPECT_FALSE(st.last_renewal);
  d.wake();
  d.read_error(errc::access_denied);
  st = d.core.status();
  EXPECT_EQ(st.consecutive_failures, 1u);
  EXPECT_EQ(st.last_error_code, make_error_code(errc::access_denied));
  EXPECT_FALSE(st.last_error.empty());
}

TEST(ElectionCoreStatus, LeaderStatus) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time s = d.now.steady;
  const wall_time w = d.now.wall;
  d.write_ok("e1");
  const detail::core_status st = d.core.status();
  EXPECT_EQ(st.role, core_role::leader);
  EXPECT_EQ(st.leader_id, "a");
  EXPECT_EQ(st.term, 1u);
  EXPECT_EQ(st.etag, "e1");
  EXPECT_EQ(st.last_renewal, s);
  EXPECT_EQ(st.last_renewal_wall, w);
}

TEST(ElectionCoreProtocol, UnexpectedCompletionsAreIgnored) {
  core_driver d(core_config("a"));
  d.start();
  d.write_ok("bogus");  // no write in flight
  EXPECT_FALSE(d.core.is_leader());
  d.read_absent();
  ASSERT_TRUE(d.writing());
  d.read_absent();  // no read in flight
  EXPECT_FALSE(d.last.operation);
  d.write_ok("e1");
  EXPECT_TRUE(d.core.is_leader());
}

TEST(ElectionCoreLeader, RaisingTheRenewDeadlineWaitsForAWriteThatAdvertisesTheLongerLease) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time s = d.now.steady;
  d.write_ok("e1");
  elector_config longer = core_config("a");
  longer.lease = 30s;
  longer.renew_deadline = 20s;
  d.update(longer);
  // The record still advertises a 15 s lease: followers may take over at S + 15 s.
  EXPECT_EQ(d.core.leadership_deadline(), s + 10s);
  d.wake();
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.written().lease, 30s);
  const steady_time s2 = d.now.steady;
  d.write_ok("e2");
  EXPECT_EQ(d.core.leadership_deadline(), s2 + 20s);
}

TEST(ElectionCoreLeader, LoweringTheRenewDeadlineAppliesAtOnce) {
  core_driver d(core_config("a"));
  d.start();
  d.read_absent();
  const steady_time s = d.now.steady;
  d.write_ok("e1");
  elector_config shorter = core_config("a");
  shorter.renew_deadline = 6s;
  shorter.request_timeout = 200ms;  // keeps the retry schedule within D - F
  d.update(shorter);
  EXPECT_EQ(d.core.leadership_deadline(), s + 6s);
}

}  // namespace
}  // namespace s3lect::test
