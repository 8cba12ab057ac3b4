// elector_config::coordination: the defaults each resolved setting follows, and each validation
// rule naming its field.
#include <s3lect/config.hpp>

#include <gtest/gtest.h>

#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

elector_config valid(milliseconds lease = 15s) {
  elector_config config = elector_config::for_lease(lease);
  config.lock_key = "leader/group.json";
  config.server_id = "node-a";
  return config;
}

elector_config watching(milliseconds lease = 15s) {
  elector_config config = valid(lease);
  config.peer.enabled = true;
  config.peer.watch = true;
  return config;
}

TEST(CoordinationConfig, DefaultsAreValidAndNeutral) {
  const elector_config config = valid();
  EXPECT_EQ(config.validate(), std::nullopt);
  EXPECT_EQ(config.coordination.priority, 0);
  EXPECT_EQ(config.handover_window(), 1000ms);  // F / 5
  EXPECT_EQ(config.rank_step(), 0ms);           // S3 mode: no ranks
  EXPECT_EQ(watching().rank_step(), 250ms);
}

TEST(CoordinationConfig, TheWindowFollowsFWithinItsBounds) {
  EXPECT_EQ(valid(2s).handover_window(), 133ms);    // F = 666 ms
  EXPECT_EQ(valid(1s).handover_window(), 100ms);    // F / 5 = 66 ms, raised
  EXPECT_EQ(valid(100ms).handover_window(), 50ms);  // L / 2
  EXPECT_EQ(valid(milliseconds{24h}).handover_window(), milliseconds{96min});  // F / 5
  elector_config given = valid();
  given.coordination.handover_window = 3s;
  EXPECT_EQ(given.handover_window(), 3s);
}

TEST(CoordinationConfig, ShortLeasesGetShorterRanks) {
  EXPECT_EQ(watching(2s).rank_step(), 111ms);  // (L - D) / 6 = 666 / 6
  EXPECT_EQ(watching(15ms).rank_step(), 0ms);
  for (const milliseconds lease : {15ms, 100ms, 2000ms, 15000ms, 60000ms, milliseconds{24h}}) {
    EXPECT_EQ(watching(lease).validate(), std::nullopt) << lease.count();
  }
  elector_config no_ranks = watching();
  no_ranks.coordination.max_ranks = 0;
  EXPECT_EQ(no_ranks.rank_step(), 0ms);
}

TEST(CoordinationConfig, EachRuleNamesItsField) {
  elector_config c = valid();
  c.coordination.priority = 1'000'001;
  EXPECT_EQ(c.validate(), "coordination.priority: must be within -1000000 .. 1000000, is 1000001");
  c = valid();
  c.coordination.priority = -1'000'000;
  EXPECT_EQ(c.validate(), std::nullopt);
  c.coordination.handover_window = 0ms;
  EXPECT_EQ(c.validate(), "coordination.handover_window: must be greater than 0, is 0 ms");
  c.coordination.handover_window = 15001ms;
  EXPECT_EQ(c.validate(),
            "coordination.handover_window: must be at most lease (15000 ms), is 15001 ms");
  c = valid();
  c.coordination.max_ranks = 9;
  EXPECT_EQ(c.validate(), "coordination.max_ranks: must be at most 8, is 9");
  c = valid();
  c.coordination.rank_step = -1ms;
  EXPECT_EQ(c.validate(), "coordination.rank_step: must be at least 0, is -1 ms");
  c.coordination.rank_step = 1667ms;  // 3 x 1667 > L - D = 5000
  EXPECT_EQ(c.validate(),
            "coordination.rank_step: max_ranks x rank_step (5001 ms) must be at most "
            "lease - renew_deadline (5000 ms)");
  c.coordination.rank_step = 1666ms;
  EXPECT_EQ(c.validate(), std::nullopt);
}

TEST(CoordinationConfig, SettleDefaultsToTheLeaseWithinFAndADay) {
  elector_config c = valid();
  EXPECT_EQ(c.settle_time(), 15s);
  EXPECT_EQ(c.coordination.preempt, preemption::automatic);
  c.coordination.settle = 4999ms;
  EXPECT_EQ(c.validate(),
            "coordination.settle: must be within frequent_interval (5000 ms) .. 24 h, is 4999 ms");
  c.coordination.settle = milliseconds{24h} + 1ms;
  EXPECT_EQ(c.validate(),
            "coordination.settle: must be within frequent_interval (5000 ms) .. 24 h, is "
            "86400001 ms");
  c.coordination.settle = 5s;
  EXPECT_EQ(c.validate(), std::nullopt);
  EXPECT_EQ(c.settle_time(), 5s);
}

TEST(CoordinationConfig, EverySettingMayChangeWhileRunning) {
  const elector_config current = watching();
  elector_config next = current;
  next.coordination.priority = 5;
  next.coordination.handover_window = 2s;
  next.coordination.rank_step = 100ms;
  next.coordination.max_ranks = 2;
  next.coordination.preempt = preemption::off;
  next.coordination.settle = 30s;
  EXPECT_EQ(validate_update(current, next), std::nullopt);
}

}  // namespace
}  // namespace s3lect
