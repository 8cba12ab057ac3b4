// election_core in peer mode, what it trusts (docs/peer-mode.md#trust-chain): the leader's key
// pin only from a record whose store authenticates its answers (or one declared trusted), and
// however well the leader says it is, a read of the store at least every 10 × I.
#include "support/election_core_harness.hpp"

#include <cstdio>

namespace s3lect::test {
namespace {

const std::string pin_of_a = "sha256:" + std::string(64, 'a');

elector_config follower_config(bool watch, bool trust_unauthenticated_store = false) {
  elector_config config = core_config("b");
  config.peer.enabled = true;
  config.peer.watch = watch;
  config.peer.trust_unauthenticated_store = trust_unauthenticated_store;
  return config;
}

/// Leader "a"'s write number `write` (term 3, dated now), carrying its key pin.
std::string write_of_a(const core_driver& d, int write) {
  char nonce[17];
  std::snprintf(nonce, sizeof nonce, "%016x", static_cast<unsigned>(write));
  lock_record record = *decode_record(foreign_body("a", 3, d.now.wall, nonce)).record;
  record.key_pin = pin_of_a;
  return encode_record(record);
}

TEST(ElectionCorePeerTrust, ThePinIsUsedOnlyFromAnAuthenticatedOrTrustedStore) {
  for (const bool authenticated : {true, false}) {
    for (const bool trusted : {false, true}) {
      SCOPED_TRACE(std::string(authenticated ? "authenticated" : "plain HTTP") +
                   (trusted ? ", trusted" : ""));
      core_driver d(follower_config(false, trusted), authenticated);
      d.start();
      for (int write = 1; !d.checking_peer(); ++write) {
        ASSERT_TRUE(d.reading());
        ASSERT_LE(write, 2) << "stable after two reads of a renewing leader";
        d.read(write_of_a(d, write), "ea" + std::to_string(write));
        d.wake();
      }
      // Without the pin, the peer client checks the leader against peer.tls's CAs.
      EXPECT_EQ(d.last.operation->peer.key_pin, authenticated || trusted ? pin_of_a : "");
      EXPECT_EQ(d.last.operation->peer.address, "a.local:8443");
    }
  }
}

TEST(ElectionCorePeerTrust, AFollowerWhosePeerAlwaysSaysAllWellStillReadsTheStoreEvery10I) {
  const auto bound = 10 * core_config("b").infrequent_interval;
  for (const bool watch : {false, true}) {
    SCOPED_TRACE(watch ? "watch" : "plain checks");
    core_driver d(follower_config(watch));
    d.start();
    const steady_time end = d.now.steady + 3 * bound;
    steady_time last_read = d.now.steady;
    std::chrono::nanoseconds longest_gap{0};
    int write = 0, reads = 0, checks = 0;
    while (d.now.steady < end) {
      if (d.reading()) {
        longest_gap = std::max(longest_gap, d.now.steady - last_read);
        last_read = d.now.steady;
        ++reads;
        ++write;
        d.read(write_of_a(d, write), "ea" + std::to_string(write));
      } else {
        ASSERT_TRUE(d.checking_peer());
        ++checks;
        // A watch is answered at the leader's next renewal (F), a plain check at once; the
        // answer is always "leading, renewed".
        if (d.last.operation->peer.watch) d.advance(5s);
        d.peer_leader(write_of_a(d, ++write));
        EXPECT_EQ(d.core.status().mode, poll_mode::stable);
      }
      if (!d.last.operation) d.wake();
    }
    longest_gap = std::max(longest_gap, d.now.steady - last_read);
    EXPECT_LE(longest_gap, bound) << "the store went unread for longer than 10 I";
    EXPECT_GE(reads, 2 + 2) << "two reads to settle, then one every 10 I";
    EXPECT_GT(checks, 3 * reads) << "the leader is still asked far more often than S3";
  }
}

}  // namespace
}  // namespace s3lect::test
