// Who may hold a watch (watch_slots.hpp, docs/peer-mode.md#watch-slots): anonymous clients are
// bounded per source address, a newcomer takes a slot from the source holding the most, and a
// client with a verified certificate takes the oldest anonymous slot when all are held.
#include "watch_slots.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

/// Admits `count` anonymous watches from `source`; returns how many were let in.
int fill(watch_slots& slots, const std::string& source, int count,
         std::vector<watch_slots::ticket>* tickets = nullptr) {
  int admitted = 0;
  for (int i = 0; i < count; ++i) {
    const watch_slots::decision decision = slots.admit(source, false);
    EXPECT_FALSE(decision.evicted);
    if (!decision.admitted) continue;
    ++admitted;
    if (tickets) tickets->push_back(*decision.admitted);
  }
  return admitted;
}

TEST(WatchSlots, AnAnonymousSourceHoldsAtMostItsShare) {
  watch_slots slots(64, 8);
  EXPECT_EQ(fill(slots, "127.0.0.2", 32), 8);
  EXPECT_EQ(fill(slots, "127.0.0.3", 32), 8);
  const watch_slots::decision follower = slots.admit("127.0.0.1", false);
  EXPECT_TRUE(follower.admitted) << "two addresses cannot take every slot";
  EXPECT_FALSE(follower.evicted);
  EXPECT_EQ(slots.held(), 17u);
}

TEST(WatchSlots, UnknownSourcesAreBoundedByTheTotalOnly) {
  watch_slots slots(4, 1);
  EXPECT_EQ(fill(slots, "", 6), 4);
  EXPECT_FALSE(slots.admit("", false).admitted);
  EXPECT_FALSE(slots.admit("10.0.0.1", false).admitted) << "no source to take a slot from";
}

TEST(WatchSlots, WhenFullANewcomerTakesTheOldestSlotOfTheSourceHoldingMost) {
  watch_slots slots(8, 4);
  std::vector<watch_slots::ticket> a;
  std::vector<watch_slots::ticket> b;
  fill(slots, "10.0.0.1", 3);
  fill(slots, "10.0.0.2", 4, &a);
  fill(slots, "10.0.0.3", 1, &b);
  const watch_slots::decision newcomer = slots.admit("10.0.0.9", false);
  ASSERT_TRUE(newcomer.admitted);
  EXPECT_EQ(newcomer.evicted, a.front()) << "10.0.0.2 held the most; its oldest goes";
  EXPECT_EQ(slots.held(), 8u);
  // Fair shares only: 10.0.0.3 holding one does not take from a source holding two.
  watch_slots even(4, 4);
  fill(even, "10.0.0.1", 2);
  fill(even, "10.0.0.2", 2);
  EXPECT_FALSE(even.admit("10.0.0.2", false).admitted);
  const watch_slots::decision third = even.admit("10.0.0.3", false);
  EXPECT_TRUE(third.admitted);
  EXPECT_TRUE(third.evicted);
  EXPECT_FALSE(even.admit("10.0.0.3", false).admitted) << "1 + 1 would not be fewer than 2";
}

TEST(WatchSlots, AVerifiedClientIsNotBoundedPerSourceAndTakesAnAnonymousSlot) {
  watch_slots slots(4, 1);
  std::vector<watch_slots::ticket> anonymous;
  fill(slots, "10.0.0.1", 1, &anonymous);
  fill(slots, "10.0.0.2", 1, &anonymous);
  EXPECT_TRUE(slots.admit("10.0.0.5", true).admitted);
  EXPECT_TRUE(slots.admit("10.0.0.5", true).admitted) << "verified: no per-source bound";
  const watch_slots::decision third = slots.admit("10.0.0.5", true);
  ASSERT_TRUE(third.admitted);
  EXPECT_EQ(third.evicted, anonymous[0]) << "the oldest anonymous watch";
  ASSERT_TRUE(slots.admit("10.0.0.5", true).evicted);
  EXPECT_FALSE(slots.admit("10.0.0.5", true).admitted) << "no anonymous slot left to take";
  EXPECT_FALSE(slots.admit("10.0.0.3", false).admitted) << "verified slots are not taken";
}

TEST(WatchSlots, AReleasedSlotIsFreeAgainAndAnEvictedTicketReleasesNothing) {
  watch_slots slots(2, 2);
  std::vector<watch_slots::ticket> held;
  fill(slots, "10.0.0.1", 2, &held);
  const watch_slots::decision verified = slots.admit("10.0.0.2", true);
  ASSERT_EQ(verified.evicted, held[0]);
  slots.release(held[0]);  // the evicted watch answers and ends: its slot is gone already
  EXPECT_EQ(slots.held(), 2u);
  slots.release(held[1]);
  EXPECT_EQ(slots.held(), 1u);
  EXPECT_TRUE(slots.admit("10.0.0.1", false).admitted);
}

TEST(WatchSlots, ZeroSlotsRefuseEveryone) {
  watch_slots none(0, 8);
  EXPECT_FALSE(none.admit("10.0.0.1", true).admitted);
  watch_slots verified_only(4, 0);
  EXPECT_FALSE(verified_only.admit("10.0.0.1", false).admitted);
  EXPECT_FALSE(verified_only.admit("", false).admitted);
  EXPECT_TRUE(verified_only.admit("10.0.0.1", true).admitted);
}

}  // namespace
}  // namespace s3lect::detail
