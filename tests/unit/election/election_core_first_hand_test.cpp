// election_core: S3 mode's follower schedules (elector_config::s3_follower_reads). First-hand
// followers read every F / 2, settled or not, so they see every renewal within F / 2 of its write
// and take over a dead leader L after their first sight of its last renewal; a read between two
// renewals is no news. The economy schedule (every F, then every I once settled) is pinned read
// by read in election_core_expiry_test.cpp.
#include "support/election_core_harness.hpp"

namespace s3lect::test {
namespace {

// b's record as a renewal numbered n would leave it, read at the current time.
void read_renewal(core_driver& d, int n) {
  d.read(foreign_body("b", 3, d.now.wall), "b-e" + std::to_string(n));
}

// A first-hand follower (the default) that has seen renewals 1 to 3 of b's record, each read
// F / 2 after the previous read, with a read between two renewals showing nothing new: settled.
core_driver settled_first_hand_follower(elector_config config) {
  core_driver d(std::move(config));
  d.start();
  for (int n = 1; n <= 3; ++n) {
    read_renewal(d, n);
    d.wake();
    read_renewal(d, n);  // between two renewals: the same ETag
    d.wake();
  }
  return d;
}

TEST(ElectionCoreFirstHand, TheDefaultInS3ModeReadsEveryHalfRenewalSettledOrNot) {
  ASSERT_EQ(elector_config{}.s3_follower_reads, follower_reads::first_hand);
  core_driver d(core_config("a"));
  d.start();
  // ETags 1, 1, 2, 2, 3: each read F / 2 after the last, every other one between renewals. The
  // leader is seen renewing at the third read; the reads between renewals change nothing.
  const poll_mode expected[] = {poll_mode::frequent, poll_mode::frequent, poll_mode::stable,
                                poll_mode::stable, poll_mode::stable};
  for (int read = 0; read < 5; ++read) {
    if (read > 0) d.wake();
    read_renewal(d, 1 + read / 2);
    EXPECT_EQ(d.core.status().mode, expected[read]) << "read " << read;
    EXPECT_EQ(d.last.wake_at, d.now.steady + 2500ms) << "F / 2, settled or not, read " << read;
  }
}

TEST(ElectionCoreFirstHand, AReadBetweenTwoRenewalsKeepsASettledFollowerSettled) {
  core_driver d = settled_first_hand_follower(core_config("a"));
  ASSERT_EQ(d.core.status().mode, poll_mode::stable);
  for (int n = 4; n <= 8; ++n) {
    read_renewal(d, n);
    EXPECT_EQ(d.core.status().mode, poll_mode::stable);
    d.wake();
    read_renewal(d, n);
    EXPECT_EQ(d.core.status().mode, poll_mode::stable) << "the same ETag F / 2 later is no news";
    d.wake();
  }
}

TEST(ElectionCoreFirstHand, ADeadLeaderIsTakenOverLAfterTheFirstSightOfItsLastRenewal) {
  elector_config config = core_config("a");
  config.max_clock_skew.reset();  // rule (b) alone decides
  core_driver d = settled_first_hand_follower(config);
  read_renewal(d, 4);  // b's last renewal; b dies
  const steady_time first_seen = d.now.steady;
  d.wake();
  read_renewal(d, 4);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable) << "F / 2: the next renewal is not due";
  d.wake();
  read_renewal(d, 4);
  EXPECT_EQ(d.core.status().mode, poll_mode::stable) << "F: due, but may be on its way";
  d.wake();
  read_renewal(d, 4);
  ASSERT_EQ(d.now.steady, first_seen + 7500ms);
  EXPECT_EQ(d.core.status().mode, poll_mode::frequent) << "1.5 F without a renewal: stalled";
  for (int reads = 0; !d.writing() && reads < 10; ++reads) {
    d.wake();
    if (d.reading()) read_renewal(d, 4);
  }
  ASSERT_TRUE(d.writing());
  EXPECT_EQ(d.now.steady, first_seen + 15s) << "rule (b): exactly L after the first sight";
  EXPECT_EQ(d.condition().etag, "b-e4");
}

TEST(ElectionCoreFirstHand, AReleaseIsSeenAtTheNextReadWithinHalfARenewal) {
  core_driver d = settled_first_hand_follower(core_config("a"));
  d.read(released_body("b", 3), "b-released");  // the read F / 2 after the last one
  ASSERT_TRUE(d.writing()) << "a released record is free at once (rule (a))";
  EXPECT_EQ(d.condition().etag, "b-released");
}

TEST(ElectionCoreFirstHand, PeerModeKeepsItsOwnSchedule) {
  elector_config config = core_config("a");
  config.peer.enabled = true;
  core_driver d(config);
  d.start();
  read_renewal(d, 1);
  EXPECT_EQ(d.last.wake_at, d.now.steady + 5s) << "an unsettled peer-mode follower reads every F";
}

}  // namespace
}  // namespace s3lect::test
