// Preemption's decisions: only verified, watching, strictly higher-priority candidates that have
// settled may take over, the leader's tenure counts too, and a candidate that could not keep a
// leadership it was handed settles longer next time.
#include "preemption.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

using namespace std::chrono_literals;
using time_point = boot_clock::time_point;

const time_point t0{std::chrono::hours{1}};
constexpr std::chrono::milliseconds settle = 15s;

candidate watcher(std::string id, std::int32_t priority, time_point since) {
  return {std::move(id), priority, since, true, true};
}

std::vector<std::string> ids(const preemption_outlook& outlook) {
  std::vector<std::string> out;
  for (const candidate& c : outlook.eligible) out.push_back(c.id);
  return out;
}

TEST(Preemption, OnlyVerifiedWatchingStrictlyHigherSettledCandidates) {
  candidate unverified = watcher("forged", 1000, t0);
  unverified.verified = false;
  candidate idle = watcher("idle", 9, t0);
  idle.watching = false;
  const std::vector<candidate> list = {unverified,
                                       idle,
                                       watcher("equal", 2, t0),
                                       watcher("lower", 1, t0),
                                       watcher("higher", 3, t0),
                                       watcher("fresh", 3, t0 + 20s)};
  const preemption_memory memory;
  const auto outlook = preemption_candidates(list, 2, t0 + 30s, t0, settle, memory);
  EXPECT_EQ(ids(outlook), std::vector<std::string>{"higher"});
  EXPECT_EQ(outlook.next_check, t0 + 35s);  // "fresh" settles 15 s after it began watching
}

TEST(Preemption, ABetterCandidateStillSettlingIsWaitedForSoLeadershipMovesOnce) {
  const preemption_memory memory;
  const std::vector<candidate> list = {watcher("second", 2, t0), watcher("best", 3, t0 + 1s)};
  const auto early = preemption_candidates(list, 1, t0 + 15s, t0 - 1h, settle, memory);
  EXPECT_TRUE(early.eligible.empty());
  EXPECT_EQ(early.next_check, t0 + 16s);
  const auto later = preemption_candidates(list, 1, t0 + 16s, t0 - 1h, settle, memory);
  EXPECT_EQ(ids(later), (std::vector<std::string>{"second", "best"}));
}

TEST(Preemption, TiesNeverPreempt) {
  const preemption_memory memory;
  const auto outlook = preemption_candidates({watcher("b", 3, t0)}, 3, t0 + 1h, t0, settle, memory);
  EXPECT_TRUE(outlook.eligible.empty());
  EXPECT_FALSE(outlook.next_check);
}

TEST(Preemption, ALeaderKeepsItForASettleTimeAtLeast) {
  const preemption_memory memory;
  const std::vector<candidate> list = {watcher("b", 3, t0 - 1h)};
  const time_point led_since = t0;
  EXPECT_TRUE(preemption_candidates(list, 0, t0 + 14s, led_since, settle, memory).eligible.empty());
  EXPECT_EQ(preemption_candidates(list, 0, t0 + 14s, led_since, settle, memory).next_check,
            t0 + 15s);
  EXPECT_EQ(ids(preemption_candidates(list, 0, t0 + 15s, led_since, settle, memory)),
            std::vector<std::string>{"b"});
}

TEST(Preemption, ACandidateThatCouldNotKeepItSettlesTwiceAsLong) {
  preemption_memory memory;
  memory.handed_over("b", t0);
  memory.regained(t0 + 20s, settle, true);  // taken back by expiry within 2 x settle: b crashed
  EXPECT_EQ(memory.settle_for("b", settle), 30s);
  EXPECT_EQ(memory.settle_for("c", settle), 15s);
  for (int i = 0; i < 6; ++i) {
    memory.handed_over("b", t0 + 1h * (i + 1));
    memory.regained(t0 + 1h * (i + 1) + 1s, settle, true);
  }
  EXPECT_EQ(memory.settle_for("b", settle), settle * preemption_memory::max_factor);
  const std::vector<candidate> list = {watcher("b", 3, t0)};
  EXPECT_TRUE(preemption_candidates(list, 0, t0 + 200s, t0 - 1h, settle, memory).eligible.empty());
  EXPECT_EQ(preemption_candidates(list, 0, t0 + 200s, t0 - 1h, settle, memory).next_check,
            t0 + 240s);
}

TEST(Preemption, ACandidateThatKeptItIsForgiven) {
  preemption_memory memory;
  memory.handed_over("b", t0);
  memory.regained(t0 + 1s, settle, true);
  ASSERT_EQ(memory.settle_for("b", settle), 30s);
  memory.handed_over("b", t0 + 1h);
  memory.regained(t0 + 1h + 60s, settle, true);  // held it for 60 s >= 2 x 30 s
  EXPECT_EQ(memory.settle_for("b", settle), 15s);
}

TEST(Preemption, ACandidateThatReleasedItIsNotPenalised) {
  // A restart (SIGTERM) of the node that preempted hands leadership back by a release: it will
  // lead again once it has settled, not after a growing backoff.
  preemption_memory memory;
  memory.handed_over("b", t0);
  memory.regained(t0 + 5s, settle, false);
  EXPECT_EQ(memory.settle_for("b", settle), 15s);
}

TEST(Preemption, RegainingWithoutAHandoverChangesNothing) {
  preemption_memory memory;
  memory.regained(t0, settle, true);
  EXPECT_EQ(memory.settle_for("", settle), 15s);
  memory.handed_over("b", t0);
  memory.regained(t0 + 1s, settle, true);
  memory.regained(t0 + 2s, settle, true);  // a second gain without a handover in between
  EXPECT_EQ(memory.settle_for("b", settle), 30s);
}

}  // namespace
}  // namespace s3lect::detail
