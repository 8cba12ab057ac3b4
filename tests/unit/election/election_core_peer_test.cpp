// election_core in peer mode (docs/peer-mode.md#how-it-works): a stable follower asks the leader's
// health endpoint instead of reading S3, falls back to one read and frequent mode on any doubt,
// keeps one watch open that the leader answers on each renewal, counts rule (b) from the moment
// the leader told it of its last write, and re-reads the store quickly when the leader's endpoint
// went away (a crashed leader, whose guardian may release the lock just after our first read).
#include "support/election_core_harness.hpp"

namespace s3lect::test {
namespace {

using detail::peer_watch_outcome;

elector_config peer_config(bool watch) {
  elector_config config = core_config("b");
  config.peer.enabled = true;
  config.peer.watch = watch;
  return config;
}

std::string leader_body(wall_time updated, const std::string& nonce) {
  return foreign_body("a", 3, updated, nonce);
}

/// Follows leader "a" (term 3) until stable mode: two reads that show it renewing. Returns the
/// body of the second read, ETag "ea2".
std::string follow_until_stable(core_driver& d) {
  d.start();
  EXPECT_TRUE(d.reading());
  d.read(leader_body(d.now.wall, "aaaaaaaaaaaa0001"), "ea1");
  d.wake();
  EXPECT_TRUE(d.reading());
  std::string body = leader_body(d.now.wall, "aaaaaaaaaaaa0002");
  d.read(body, "ea2");
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  return body;
}

TEST(ElectionCorePeer, StableFollowerChecksTheLeaderEveryIAndReadsNothing) {
  core_driver d(peer_config(false));
  const std::string body = follow_until_stable(d);
  steady_time last_done = d.now.steady;
  EXPECT_FALSE(d.last.operation) << "nothing until the infrequent interval";
  int reads = 0;
  // Nine: at 10 I the store is read however well the leader says it is
  // (election_core_peer_trust_test.cpp).
  for (int i = 1; i <= 9; ++i) {
    d.wake();
    EXPECT_EQ(d.now.steady, last_done + 30s) << "every I after the last check";
    reads += d.reading() ? 1 : 0;
    ASSERT_TRUE(d.checking_peer());
    const auto& check = d.last.operation->peer;
    EXPECT_EQ(check.address, "a.local:8443");
    EXPECT_EQ(check.term, 3u);
    EXPECT_FALSE(check.watch) << "plain checks without peer.watch";
    d.advance(20ms);
    d.peer_leader(body);
    EXPECT_FALSE(d.last.operation);
    EXPECT_EQ(d.core.status().mode, poll_mode::stable);
    last_done = d.now.steady;
  }
  EXPECT_EQ(reads, 0);
}

TEST(ElectionCorePeer, WithoutPeerModeTheStableFollowerReadsTheStore) {
  core_driver d(core_config("b"));
  follow_until_stable(d);
  d.wake();
  EXPECT_TRUE(d.reading());
}

TEST(ElectionCorePeer, LeaderWithoutAddressIsReadFromTheStore) {
  core_driver d(peer_config(true));
  d.start();
  lock_record record;
  record.leader_id = "a";
  record.term = 3;
  record.lease = 15s;
  record.last_updated = d.now.wall;
  record.nonce = "aaaaaaaaaaaa0001";
  d.read(encode_record(record), "ea1");
  d.wake();
  record.last_updated = d.now.wall;
  record.nonce = "aaaaaaaaaaaa0002";
  d.read(encode_record(record), "ea2");
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_FALSE(d.checking_peer()) << "no leaderAddr: nobody to ask";
  d.wake();
  EXPECT_TRUE(d.reading());
}

TEST(ElectionCorePeer, AFailedCheckReadsTheStoreAtOnceInFrequentMode) {
  core_driver d(peer_config(false));
  follow_until_stable(d);
  d.wake();
  ASSERT_TRUE(d.checking_peer());
  d.advance(3s);
  d.peer_error(errc::tls_verification_failed);
  EXPECT_TRUE(d.reading()) << "one S3 read at once";
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  EXPECT_NE(d.core.status().last_error.find("peer check"), std::string::npos);
}

TEST(ElectionCorePeer, ALeaderThatSaysItDoesNotLeadSendsTheFollowerToTheStore) {
  core_driver d(peer_config(false));
  follow_until_stable(d);
  d.wake();
  ASSERT_TRUE(d.checking_peer());
  d.peer_not_leader();
  EXPECT_TRUE(d.reading());
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

TEST(ElectionCorePeer, APeerLeadingUnderAnotherTermOrNameIsNotTrusted) {
  for (const auto& [id, term] : {std::pair<std::string, std::uint64_t>{"a", 4}, {"c", 3}}) {
    core_driver d(peer_config(false));
    follow_until_stable(d);
    d.wake();
    ASSERT_TRUE(d.checking_peer());
    d.peer_leader(foreign_body(id, term, d.now.wall, "cccccccccccc0001"));
    EXPECT_TRUE(d.reading()) << id << " term " << term;
    EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
  }
}

TEST(ElectionCorePeer, WatchStartsWithAPlainCheckThenFollowsTheLeadersSerial) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  ASSERT_TRUE(d.checking_peer()) << "with watches, the first check goes at once";
  EXPECT_FALSE(d.last.operation->peer.watch) << "a plain check learns the serial first";
  d.advance(10ms);
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  auto check = d.last.operation->peer;
  ASSERT_TRUE(check.watch);
  EXPECT_EQ(*check.watch, 30s) << "a watch lasts up to I";
  EXPECT_EQ(check.term, 3u);
  EXPECT_EQ(check.serial, std::optional<std::uint64_t>(7));
  EXPECT_EQ(d.last.wake_at, d.now.steady + 10s) << "silence for D means trouble";

  d.advance(5s);  // the leader renews: the watch answers with the new serial
  d.peer_leader(leader_body(d.now.wall, "aaaaaaaaaaaa0003"), 8, peer_watch_outcome::changed);
  ASSERT_TRUE(d.checking_peer());
  check = d.last.operation->peer;
  EXPECT_EQ(check.serial, std::optional<std::uint64_t>(8));
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
}

TEST(ElectionCorePeer, AWatchSilentForTheRenewDeadlineIsCancelledAndTheStoreRead) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  const steady_time started = d.now.steady;
  d.wake();
  EXPECT_EQ(d.now.steady, started + 10s);
  EXPECT_TRUE(d.last.cancel_operation);
  EXPECT_FALSE(d.last.operation);
  d.peer_error(boost::asio::error::operation_aborted);
  EXPECT_TRUE(d.reading());
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent);
}

/// The leader's watch connection drops; the store still holds `last` (ETag "ea3"). Reads it
/// whenever asked until the core takes over, failing if that is later than `latest`.
void take_over_after_crash(core_driver& d, const std::string& last, steady_time latest) {
  d.peer_error(errc::connection_lost);
  ASSERT_TRUE(d.reading());
  d.read(last, "ea3");
  while (!d.writing()) {
    d.wake();
    ASSERT_LE(d.now.steady, latest);
    if (d.reading()) d.read(last, "ea3");
  }
  EXPECT_EQ(d.condition().etag, "ea3");
  EXPECT_EQ(d.written().term, 4u);
}

// d follows the watched leader until stable and hears of one renewal; 5 s later the leader
// writes again. Returns the body of that last write, which d has not yet heard of.
std::string hear_of_a_renewal_then_write_again(core_driver& d) {
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  d.advance(5s);
  return leader_body(d.now.wall, "aaaaaaaaaaaa0003");
}

// The crash case: the leader told us of its last renewal at t; its connection then drops. The
// store still holds exactly that write, so the leader sent it before t: rule (b) may count from
// t, not from our first read of its ETag.
TEST(ElectionCorePeer, RuleBCountsFromTheLeadersReportOfItsLastWrite) {
  elector_config config = peer_config(true);
  config.max_clock_skew.reset();  // rule (b) alone
  core_driver d(config);
  const std::string last = hear_of_a_renewal_then_write_again(d);
  d.peer_leader(last, 8, peer_watch_outcome::changed);
  const steady_time told_at = d.now.steady;
  d.advance(3s);
  take_over_after_crash(d, last, told_at + 15s);
  EXPECT_EQ(d.now.steady, told_at + 15s);
}

// The leader says how long before answering it sent that write: rule (b) counts from then, so
// a crash costs L after the dead leader's last write instead of L after our hearing of it.
TEST(ElectionCorePeer, RuleBCountsFromTheWriteAgeTheLeaderReports) {
  elector_config config = peer_config(true);
  config.max_clock_skew.reset();  // rule (b) alone
  core_driver d(config);
  const std::string last = hear_of_a_renewal_then_write_again(d);
  d.peer_leader(last, 8, peer_watch_outcome::changed, 40ms);
  const steady_time sent_at = d.now.steady - 40ms;
  // A later answer about the same write with a smaller age must not move the start later.
  d.advance(1s);
  d.peer_leader(last, 8, peer_watch_outcome::timeout, 10ms);
  d.advance(2s);
  take_over_after_crash(d, last, sent_at + 15s);
  EXPECT_EQ(d.now.steady, sent_at + 15s);
}

TEST(ElectionCorePeer, AWriteTheLeaderNeverReportedCountsFromOurRead) {
  elector_config config = peer_config(true);
  config.max_clock_skew.reset();
  core_driver d(config);
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  d.advance(3s);
  d.peer_error(errc::connection_lost);
  ASSERT_TRUE(d.reading());
  // A renewal the leader sent after its last answer: nothing tells us when.
  const std::string unreported = leader_body(d.now.wall, "aaaaaaaaaaaa0009");
  const steady_time read_at = d.now.steady;
  d.read(unreported, "ea9");
  while (!d.writing()) {
    d.wake();
    if (d.reading()) d.read(unreported, "ea9");
  }
  EXPECT_EQ(d.now.steady, read_at + 15s);
}

// --- A crashed leader's guardian releases the lock: the re-read burst ------------------------

/// Watches leader "a" until its watch connection fails with `ec`; the store then holds `last`
/// (ETag "ea3"), which the leader had reported through the watch. Returns the store's record.
std::string watch_until_failure(core_driver& d, boost::system::error_code ec) {
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  d.advance(5s);
  std::string last = leader_body(d.now.wall, "aaaaaaaaaaaa0003");
  d.peer_leader(last, 8, peer_watch_outcome::changed);
  d.advance(2s);
  d.peer_error(ec);
  EXPECT_TRUE(d.reading()) << "one S3 read at once, whatever the failure";
  return last;
}

/// Reads `body` (ETag `etag`) for the read in flight, then fires the timer: the pause until the
/// next read, or nullopt when the core did something else.
std::optional<std::chrono::nanoseconds> next_read_after(core_driver& d, const std::string& body,
                                                        const std::string& etag) {
  d.read(body, etag);
  const steady_time read_at = d.now.steady;
  d.wake();
  if (!d.reading()) return std::nullopt;
  return d.now.steady - read_at;
}

// The leader's process died: the kernel closed its watch, and its guardian releases the lock
// some 10-100 ms later, after our first read. Today's follower would find the release only at its
// next read, F later; it re-reads 50 ms later instead and takes over at once.
TEST(ElectionCorePeer, AWatchClosedUnderItReadsTheStoreAgainSoonAndTakesOverTheRelease) {
  core_driver d(peer_config(true));
  const std::string last = watch_until_failure(d, errc::connection_lost);
  EXPECT_EQ(next_read_after(d, last, "ea3"), std::optional<std::chrono::nanoseconds>(50ms))
      << "the guardian's release comes after the first read: read again soon";
  d.read(released_body("a", 3), "er");
  ASSERT_TRUE(d.writing()) << "rule (a): the release is taken over at once";
  EXPECT_EQ(d.condition().etag, "er");
  EXPECT_EQ(d.written().term, 4u);
}

TEST(ElectionCorePeer, TheRereadsDoubleTheirPauseUntilTheFrequentInterval) {
  core_driver d(peer_config(true));
  const std::string last = watch_until_failure(d, errc::connection_lost);
  std::vector<std::chrono::nanoseconds> pauses;
  for (int i = 0; i < 8; ++i) {
    const auto pause = next_read_after(d, last, "ea3");
    ASSERT_TRUE(pause) << "read " << i;
    pauses.push_back(*pause);
  }
  const std::vector<std::chrono::nanoseconds> expected{50ms,  100ms,  200ms,  400ms,
                                                       800ms, 1600ms, 3200ms, 5s};
  EXPECT_EQ(pauses, expected) << "seven quick reads (6.35 s), then every F";
}

TEST(ElectionCorePeer, ARefusedPlainCheckOfAnEndpointThatAnsweredBeforeRereadsSoon) {
  core_driver d(peer_config(false));
  const std::string body = follow_until_stable(d);
  d.wake();
  ASSERT_TRUE(d.checking_peer());
  d.peer_leader(body);
  d.wake();
  ASSERT_TRUE(d.checking_peer());
  d.peer_error(errc::connect_failed);  // after the retry policy: nobody listens any more
  ASSERT_TRUE(d.reading());
  const std::string last = leader_body(d.now.wall, "aaaaaaaaaaaa0005");
  EXPECT_EQ(next_read_after(d, last, "ea5"), std::optional<std::chrono::nanoseconds>(50ms));
}

// An endpoint that never answered for this leadership (not started, a firewall) did not go away:
// a burst every time the follower goes stable would only cost GETs.
TEST(ElectionCorePeer, AnEndpointThatNeverAnsweredGetsOneReadAndThenF) {
  core_driver d(peer_config(false));
  follow_until_stable(d);
  d.wake();
  ASSERT_TRUE(d.checking_peer());
  d.peer_error(errc::connect_failed);
  ASSERT_TRUE(d.reading());
  const std::string last = leader_body(d.now.wall, "aaaaaaaaaaaa0005");
  EXPECT_EQ(next_read_after(d, last, "ea5"), std::optional<std::chrono::nanoseconds>(5s));
}

// A frozen leader keeps its connections: the watch times out (or our deadline cancels it), and
// no guardian release is coming (the leader's process still lives). One read, then F.
TEST(ElectionCorePeer, ATimeoutOrAnotherFailureGetsOneReadAndThenF) {
  for (const boost::system::error_code ec :
       {make_error_code(errc::timeout), make_error_code(errc::tls_verification_failed),
        make_error_code(errc::protocol_error),
        boost::system::error_code(boost::asio::error::operation_aborted)}) {
    core_driver d(peer_config(true));
    const std::string last = watch_until_failure(d, ec);
    EXPECT_EQ(next_read_after(d, last, "ea3"), std::optional<std::chrono::nanoseconds>(5s))
        << ec.message();
  }
}

TEST(ElectionCorePeer, TheRereadsStopWhenTheRecordShowsTheLeaderRenewing) {
  core_driver d(peer_config(true));
  const std::string last = watch_until_failure(d, errc::connection_lost);
  ASSERT_EQ(next_read_after(d, last, "ea3"), std::optional<std::chrono::nanoseconds>(50ms));
  // Only its endpoint restarted: the leader renews, so no release is coming. Two reads that
  // show it renewing (this one and the first after the failure) make the follower stable again.
  d.read(leader_body(d.now.wall, "aaaaaaaaaaaa0004"), "ea4");
  EXPECT_EQ(d.core.status().mode, poll_mode::stable);
  EXPECT_TRUE(d.checking_peer()) << "back to the watch, no more quick reads";
}

TEST(ElectionCorePeer, TheRereadsStopAtANewLeaderOrAFailedRead) {
  {
    core_driver d(peer_config(true));
    watch_until_failure(d, errc::connection_lost);
    const std::string other = foreign_body("c", 4, d.now.wall, "cccccccccccc0001");
    EXPECT_EQ(next_read_after(d, other, "ec1"), std::optional<std::chrono::nanoseconds>(5s))
        << "someone else leads already: the usual rules";
  }
  {
    core_driver d(peer_config(true));
    const std::string last = watch_until_failure(d, errc::connection_lost);
    ASSERT_EQ(next_read_after(d, last, "ea3"), std::optional<std::chrono::nanoseconds>(50ms));
    d.read_error(errc::server_error);
    const steady_time failed_at = d.now.steady;
    d.wake();
    EXPECT_TRUE(d.reading());
    EXPECT_EQ(d.now.steady - failed_at, 5s) << "a failing store is not read faster";
  }
}

TEST(ElectionCorePeer, AReleaseHeardThroughTheWatchIsTakenOverAtOnce) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  d.advance(2s);
  d.peer_not_leader(peer_watch_outcome::changed);
  ASSERT_TRUE(d.reading());
  d.read(released_body("a", 3), "er");
  ASSERT_TRUE(d.writing()) << "rule (a): no waiting";
  EXPECT_EQ(d.condition().etag, "er");
  EXPECT_EQ(d.written().term, 4u);
}

const std::string pin_a = "sha256:" + std::string(64, 'a');

TEST(ElectionCorePeer, ALeaderWritesItsKeyPinIntoEveryRecordIncludingTheRelease) {
  elector_config config = peer_config(true);
  config.peer.key_pin = pin_a;
  core_driver d(config);
  d.start();
  d.read_absent();
  EXPECT_EQ(d.written().key_pin, pin_a);
  d.write_ok("e1");
  d.wake();
  EXPECT_EQ(d.written().key_pin, pin_a) << "renewal";
  d.write_ok("e2");
  d.stop();
  EXPECT_TRUE(d.written().released);
  EXPECT_EQ(d.written().key_pin, pin_a);
}

TEST(ElectionCorePeer, WithoutPeerModeOrAPinRecordsCarryNoPin) {
  elector_config config = core_config("b");
  config.peer.key_pin = pin_a;  // set, but peer mode is off: no endpoint to pin
  core_driver d(config);
  d.start();
  d.read_absent();
  EXPECT_EQ(d.written().key_pin, "");
  core_driver ca_mode(peer_config(true));
  ca_mode.start();
  ca_mode.read_absent();
  EXPECT_EQ(ca_mode.written().key_pin, "");
}

TEST(ElectionCorePeer, TheCheckTrustsThePinOfTheRecordReadFromTheStore) {
  core_driver d(peer_config(false));
  d.start();
  for (const char* nonce : {"aaaaaaaaaaaa0001", "aaaaaaaaaaaa0002"}) {
    lock_record record = *decode_record(leader_body(d.now.wall, nonce)).record;
    record.key_pin = pin_a;
    d.read(encode_record(record), nonce);
    d.wake();
  }
  ASSERT_TRUE(d.checking_peer());
  EXPECT_EQ(d.last.operation->peer.key_pin, pin_a);
}

TEST(ElectionCorePeer, AReleaseThatNamesItsRecordIsTakenOverWithoutARead) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  d.advance(2s);
  d.peer_released("er", 3);
  ASSERT_TRUE(d.writing()) << "one round trip: the takeover is the next request";
  EXPECT_EQ(d.condition().etag, "er");
  EXPECT_EQ(d.written().term, 4u);
  EXPECT_EQ(d.written().leader_id, "b");
  d.write_ok("eb");
  EXPECT_TRUE(d.core.is_leader());
  EXPECT_EQ(d.core.status().term, 4u);
}

TEST(ElectionCorePeer, AReleasedRecordOfAnotherTermIsReadFromTheStore) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  d.peer_released("er", 2);  // not the term we follow: stale or confused, read instead
  EXPECT_TRUE(d.reading());
}

TEST(ElectionCorePeer, ATakeoverOfANamedReleaseThatLosesTheRaceReadsTheStore) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  d.peer_released("er", 3);
  ASSERT_TRUE(d.writing());
  d.write_error(errc::precondition_failed);
  ASSERT_TRUE(d.reading()) << "412: someone wrote after the release; the normal path";
  EXPECT_FALSE(d.core.is_leader());
  d.read(foreign_body("c", 4, d.now.wall), "ec");
  EXPECT_FALSE(d.writing());
  EXPECT_EQ(d.core.status().leader_id, "c");
}

TEST(ElectionCorePeer, ALeaderWritesAReleaseWhoseEtagAndTermItsFollowersHear) {
  core_driver d(peer_config(true));
  d.become_leader("e1");
  d.stop();
  ASSERT_TRUE(d.writing());
  EXPECT_TRUE(d.written().released);
  d.write_ok("e-released");
  const auto finished = d.last_notices<detail::release_finished>();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].released);
  EXPECT_EQ(finished[0].etag, "e-released");
  EXPECT_EQ(finished[0].term, 1u);
}

TEST(ElectionCorePeer, ALeaderThatIgnoresWatchesIsPolledEveryI) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body);  // no serial: not an s3lect leader
  ASSERT_TRUE(d.checking_peer());
  ASSERT_TRUE(d.last.operation->peer.watch);
  EXPECT_FALSE(d.last.operation->peer.serial);
  EXPECT_FALSE(d.last.wake_at) << "no deadline without renewals to follow";
  d.advance(20ms);
  const steady_time answered = d.now.steady;
  d.peer_leader(body);  // answered at once, without an X-S3lect-Watch header (a Go leader)
  EXPECT_FALSE(d.last.operation) << "no tight loop";
  d.wake();
  EXPECT_EQ(d.now.steady, answered + 30s);
  ASSERT_TRUE(d.checking_peer());
  EXPECT_FALSE(d.last.operation->peer.watch);
}

/// Answers every peer check 2 ms after it is sent with `outcome` (a new serial each time) for
/// `window` of the manual clock; returns when each check was sent.
std::vector<steady_time> answer_every_check_at_once(core_driver& d, const std::string& body,
                                                    peer_watch_outcome outcome,
                                                    std::chrono::seconds window) {
  std::vector<steady_time> sent;
  const steady_time end = d.now.steady + window;
  std::uint64_t serial = 8;
  while (d.now.steady < end) {
    if (!d.checking_peer()) {
      if (!d.last.wake_at) break;
      d.wake();
      continue;
    }
    sent.push_back(d.now.steady);
    d.advance(2ms);
    d.peer_leader(body, ++serial, outcome);
  }
  return sent;
}

/// The most checks sent within any `span`.
std::size_t most_within(const std::vector<steady_time>& sent, std::chrono::milliseconds span) {
  std::size_t most = 0;
  for (std::size_t first = 0; first < sent.size(); ++first) {
    std::size_t count = 0;
    while (first + count < sent.size() && sent[first + count] - sent[first] < span) ++count;
    most = std::max(most, count);
  }
  return most;
}

/// The next check is a watch (not a plain check); held until the leader renews 5 s later, it
/// ends the pauses: the one after it goes at once.
void expect_a_held_watch_to_end_the_pauses(core_driver& d, const std::string& body) {
  ASSERT_TRUE(d.checking_peer() || d.last.wake_at);
  while (!d.checking_peer()) d.wake();
  EXPECT_TRUE(d.last.operation->peer.watch) << "still asking for a watch, not plain checks";
  d.advance(5s);
  d.peer_leader(body, 1000, peer_watch_outcome::changed);
  ASSERT_TRUE(d.checking_peer());
  EXPECT_TRUE(d.last.operation->peer.watch);
}

// Issue 28: a leader that answered every watch with "changed" at once drove a follower to ~500
// checks a second. The pause after each such answer doubles from 250 ms to I.
TEST(ElectionCorePeer, AWatchAnsweredAtOnceEveryTimeIsPacedNotSpun) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);  // the introducing plain check
  const std::vector<steady_time> sent =
      answer_every_check_at_once(d, body, peer_watch_outcome::changed, 30s);
  ASSERT_GE(sent.size(), 5u);
  EXPECT_LE(sent.size(), 8u) << "one check per round trip would be ~15,000";
  EXPECT_LE(most_within(sent, 1000ms), 3u) << "no more than three in any second";
  EXPECT_EQ(sent[1] - sent[0], 252ms) << "first pause 250 ms after the 2 ms answer";
  EXPECT_EQ(sent[2] - sent[1], 502ms) << "then twice as long";
  EXPECT_EQ(d.core.status().mode, poll_mode::stable) << "the leader is still trusted";

  expect_a_held_watch_to_end_the_pauses(d, body);
}

// Issue 28: a watch refused by a full server was never asked for again: the follower polled
// every I for as long as the leader led, and a crash went unnoticed for up to I.
TEST(ElectionCorePeer, ARefusedWatchIsAskedForAgainWithGrowingPausesUpToI) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  const std::vector<steady_time> sent =
      answer_every_check_at_once(d, body, peer_watch_outcome::refused, 120s);
  ASSERT_GE(sent.size(), 9u);
  EXPECT_EQ(sent[1] - sent[0], 252ms);
  EXPECT_EQ(sent.back() - sent[sent.size() - 2], 30s + 2ms) << "the pause stops growing at I";
  expect_a_held_watch_to_end_the_pauses(d, body);
}

TEST(ElectionCorePeer, StopCancelsAWatchAndStops) {
  core_driver d(peer_config(true));
  const std::string body = follow_until_stable(d);
  d.peer_leader(body, 7);
  ASSERT_TRUE(d.checking_peer());
  d.stop();
  EXPECT_TRUE(d.last.cancel_operation);
  d.peer_error(boost::asio::error::operation_aborted);
  EXPECT_EQ(d.all_notices<detail::core_stopped>().size(), 1u);
  EXPECT_FALSE(d.last.operation);
}

}  // namespace
}  // namespace s3lect::test
