// Preemption in the core: a leader hands over (or advises handing over) to a verified, watching
// candidate of strictly higher priority once both have settled, never earlier, never to a tie,
// never to an unverified claim; handing over is a resignation (the loss first, then the release).
#include "support/election_core_harness.hpp"

#include <gtest/gtest.h>

namespace s3lect::test {
namespace {

using detail::candidate;
using detail::handover_advised;

// Runs the leader's timer until `until`, answering every renewal: the leader just keeps leading.
void lead_until(core_driver& d, steady_time until, int* etags) {
  while (d.last.wake_at && *d.last.wake_at <= until && d.core.is_leader()) {
    d.wake();
    if (d.writing() && !d.written().released) d.write_ok("renewed-" + std::to_string(++*etags));
  }
}

candidate watcher(std::string id, std::int32_t priority, steady_time since, bool verified = true) {
  return {std::move(id), priority, since, true, verified};
}

struct preemption_fixture {
  explicit preemption_fixture(preemption mode = preemption::automatic) : d(make(mode)) {
    d.become_leader();
    led_at = d.now.steady;
  }
  static elector_config make(preemption mode) {
    elector_config config = core_config("a");
    config.coordination.preempt = mode;
    return config;
  }
  void candidates(std::vector<candidate> list) {
    d.last = d.core.on_candidates(d.now, std::move(list));
    d.notices.insert(d.notices.end(), d.last.notices.begin(), d.last.notices.end());
  }
  core_driver d;
  steady_time led_at;
  int etags = 0;
};

TEST(ElectionCorePreemption, HandsOverOnceTheCandidateAndTheLeaderHaveSettled) {
  preemption_fixture f;
  f.candidates({watcher("b", 3, f.led_at)});
  lead_until(f.d, f.led_at + 15s - 1ms, &f.etags);
  EXPECT_TRUE(f.d.core.is_leader());
  EXPECT_TRUE(f.d.all_notices<leadership_lost>().empty());
  ASSERT_EQ(f.d.last.wake_at, f.led_at + 15s);  // woken exactly when the settle time ends
  f.d.wake();
  const auto lost = f.d.last_notices<leadership_lost>();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, loss_reason::preempted);
  EXPECT_FALSE(f.d.core.is_leader());
  ASSERT_TRUE(f.d.writing());  // the loss is reported first, in the same step as the release
  EXPECT_TRUE(f.d.written().released);
  EXPECT_EQ(f.d.written().successor, "b");
}

TEST(ElectionCorePreemption, NeverToATieALowerPriorityOrAnUnverifiedClaim) {
  preemption_fixture f;
  f.candidates({watcher("tie", 0, f.led_at), watcher("lower", -1, f.led_at),
                watcher("forged", 1000, f.led_at, false)});
  lead_until(f.d, f.led_at + 1h, &f.etags);
  EXPECT_TRUE(f.d.core.is_leader());
  EXPECT_TRUE(f.d.all_notices<leadership_lost>().empty());
}

TEST(ElectionCorePreemption, ABreakInTheWatchStartsTheCountAgain) {
  preemption_fixture f;
  lead_until(f.d, f.led_at + 20s, &f.etags);
  f.candidates({watcher("b", 3, f.led_at + 10s)});
  lead_until(f.d, f.led_at + 24s, &f.etags);
  f.candidates({watcher("b", 3, f.led_at + 24s)});  // it reconnected: watching since now
  lead_until(f.d, f.led_at + 39s - 1ms, &f.etags);
  EXPECT_TRUE(f.d.core.is_leader());
  lead_until(f.d, f.led_at + 39s, &f.etags);
  EXPECT_FALSE(f.d.core.is_leader());
}

TEST(ElectionCorePreemption, AdviseModeOnlyAdvisesOncePerTermAndSuccessor) {
  preemption_fixture f(preemption::advise);
  f.candidates({watcher("b", 3, f.led_at - 1h)});
  lead_until(f.d, f.led_at + 15s, &f.etags);
  const auto advice = f.d.all_notices<handover_advised>();
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].successor, "b");
  EXPECT_EQ(advice[0].term, 1u);
  lead_until(f.d, f.led_at + 60s, &f.etags);
  EXPECT_TRUE(f.d.core.is_leader());  // the application decides
  EXPECT_EQ(f.d.all_notices<handover_advised>().size(), 1u);
  f.candidates({watcher("c", 5, f.led_at - 1h), watcher("b", 3, f.led_at - 1h)});
  ASSERT_EQ(f.d.all_notices<handover_advised>().size(), 2u);  // a better one: advised anew
  EXPECT_EQ(f.d.all_notices<handover_advised>()[1].successor, "c");
}

TEST(ElectionCorePreemption, OffNeverActs) {
  preemption_fixture f(preemption::off);
  f.candidates({watcher("b", 3, f.led_at - 1h)});
  lead_until(f.d, f.led_at + 1h, &f.etags);
  EXPECT_TRUE(f.d.core.is_leader());
  EXPECT_TRUE(f.d.all_notices<handover_advised>().empty());
}

TEST(ElectionCorePreemption, TheBestEligibleCandidateIsChosen) {
  preemption_fixture f(preemption::advise);
  f.candidates({watcher("c", 2, f.led_at - 1h), watcher("b", 3, f.led_at - 10s),
                watcher("a2", 3, f.led_at - 20s), watcher("z", 3, f.led_at + 14s)});
  lead_until(f.d, f.led_at + 15s, &f.etags);
  ASSERT_EQ(f.d.all_notices<handover_advised>().size(), 1u);
  EXPECT_EQ(f.d.all_notices<handover_advised>()[0].successor, "a2");  // z has not settled
}

}  // namespace
}  // namespace s3lect::test
