// The elector's coroutine layer over the in-memory storage: leadership as awaitable signals,
// handover, failover, self-demotion under partition, hooks, cancellation, configuration.
// Durations are scaled down (lease 600 ms) and run on a manual clock (tests/support/
// elector_group.hpp); tests wait for elector events, never for fixed sleeps.
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include "clock_timer.hpp"
#include "support/elector_group.hpp"
#include "support/go_timestamp.hpp"
#include "support/leadership_timeline.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using s3lect::elector;
using s3lect::elector_config;
using s3lect::leadership_lease;
using s3lect::memory_faults;
using s3lect::memory_storage;
using s3lect::memory_store;
using steady = std::chrono::steady_clock;
using s3lect::test::expect_safe;
using s3lect::test::record_periods;

namespace {

elector_config fast_config(std::string id, std::string key = "group/leader.json") {
  elector_config config;
  config.lock_key = std::move(key);
  config.server_id = std::move(id);
  config.server_address = "127.0.0.1:1";
  s3lect::test::use_short_timing(config);
  return config;
}

/// The shared fixture with this file's configuration, adjusted by `tweak`.
struct group : s3lect::test::elector_group {
  explicit group(int size, const std::function<void(elector_config&)>& tweak = {},
                 time kind = time::manual)
      : elector_group(
            size,
            [&tweak](int i) {
              auto config = fast_config("node-" + std::to_string(i));
              if (tweak) tweak(config);
              return config;
            },
            kind) {}
};

/// A timer on the elector's clock (the group's manual clock), for hooks that take a while.
using hook_timer = s3lect::detail::clock_timer<asio::steady_timer>;

asio::awaitable<void> stop_elector(elector& e, bool& done) {
  co_await e.async_stop();
  done = true;
}

}  // namespace

TEST(Elector, RejectsInvalidConfigNamingTheField) {
  asio::io_context io;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  auto config = fast_config("a");
  config.renew_deadline = config.lease;
  try {
    elector e(io.get_executor(), view, config);
    FAIL() << "an invalid configuration was accepted";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), s3lect::errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("renew_deadline"), std::string::npos) << e.what();
  }
}

TEST(Elector, LoneElectorAcquiresAnAbsentLockWithTermOne) {
  group g(1);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  auto record = g.record();
  ASSERT_TRUE(record);
  EXPECT_EQ(record->leader_id, "node-0");
  EXPECT_EQ(record->term, 1u);
  EXPECT_FALSE(record->released);
  EXPECT_EQ(g.electors[0]->status().term, 1u);
  EXPECT_EQ(g.electors[0]->leader_id(), "node-0");
}

TEST(Elector, ThreeElectorsElectExactlyOneAndKeepIt) {
  group g(3);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  const int leader = g.leader_index();
  // Several lease lengths later: the same leader, renewing, and everyone agrees on it.
  const auto first_etag = g.store->peek("group/leader.json")->etag;
  g.run_until([] { return false; }, 2s);
  EXPECT_EQ(g.leader_count(), 1);
  EXPECT_EQ(g.leader_index(), leader);
  EXPECT_NE(g.store->peek("group/leader.json")->etag, first_etag) << "the leader must renew";
  for (const auto& e : g.electors) EXPECT_EQ(e->leader_id(), "node-" + std::to_string(leader));
  EXPECT_EQ(g.record()->term, 1u);
  ASSERT_EQ(g.periods.size(), 1u);
  expect_safe(g.periods);
}

TEST(Elector, GracefulStopReleasesAndAFollowerTakesOverWithTheNextTerm) {
  group g(3);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  const int old_leader = g.leader_index();
  bool stopped = false;
  asio::co_spawn(g.io, stop_elector(*g.electors[old_leader], stopped), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return stopped; }));
  EXPECT_FALSE(g.electors[old_leader]->is_leader());
  auto released = g.record();
  ASSERT_TRUE(released);
  EXPECT_TRUE(released->released || released->leader_id != "node-" + std::to_string(old_leader));

  std::vector<std::uint64_t> gets_at_release;
  for (const auto& view : g.views) gets_at_release.push_back(view->stats().gets);
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  // A released record is taken at a follower's next read, not after a lease (which would take
  // several reads, one every frequent or infrequent interval). A read sent before the release
  // was written may have reached the store after it: then the count is 0.
  const int new_leader = g.leader_index();
  ASSERT_GE(new_leader, 0);
  EXPECT_LE(g.views[new_leader]->stats().gets - gets_at_release[new_leader], 1u);
  EXPECT_NE(new_leader, old_leader);
  EXPECT_EQ(g.record()->term, 2u);
  expect_safe(g.periods);
}

TEST(Elector, FollowerTakesOverAfterTheLeaseWhenTheLeaderVanishesWithoutRelease) {
  group g(2);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  const int old_leader = g.leader_index();
  // Let the observer see the lease first: it must not touch the elector after destruction.
  ASSERT_TRUE(g.run_until([&] { return g.periods.size() == 1; }));
  const auto last_write = g.now();
  g.electors[old_leader].reset();  // Destroyed: no release.
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  // Rule (b) needs the record unchanged for a whole lease on the follower's clock.
  EXPECT_GE(g.now() - last_write, 600ms - 160ms);
  EXPECT_EQ(g.record()->term, 2u);
  expect_safe(g.periods);
}

TEST(Elector, PartitionedLeaderDemotesItselfBeforeAnyoneTakesOver) {
  std::mt19937 random(12345);
  for (int round = 0; round < 4; ++round) {
    group g(3);
    g.start_all();
    ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
    const int old_leader = g.leader_index();
    // Partition at a random moment of the renewal cycle.
    g.run_until([] { return false; }, std::chrono::milliseconds(random() % 150));
    memory_faults faults;
    faults.partitioned = true;
    g.views[old_leader]->set_faults(faults);
    ASSERT_TRUE(g.run_until([&] {
      return g.leader_count() == 1 && g.leader_index() != old_leader;
    })) << "round "
        << round;
    EXPECT_FALSE(g.electors[old_leader]->is_leader());
    ASSERT_TRUE(g.run_until([&] { return g.periods.size() >= 2; }));
    expect_safe(g.periods);
    // Heal: the old leader must follow the new one, not fight it.
    g.views[old_leader]->set_faults({});
    g.run_until([] { return false; }, 500ms);
    EXPECT_EQ(g.leader_count(), 1);
    expect_safe(g.periods);
  }
}

TEST(Elector, AnyNumberOfLeadershipWaitersCompleteAndCancelledOnesLeaveItUsable) {
  group g(1);
  std::vector<leadership_lease> leases;
  asio::cancellation_signal cancel;
  error_code cancelled_ec;
  g.electors[0]->async_wait_for_leadership(asio::bind_cancellation_slot(
      cancel.slot(), [&](error_code ec, leadership_lease) { cancelled_ec = ec; }));
  for (int i = 0; i < 5; ++i) {
    g.electors[0]->async_wait_for_leadership([&](error_code ec, leadership_lease lease) {
      if (!ec) leases.push_back(lease);
    });
  }
  cancel.emit(asio::cancellation_type::terminal);
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return leases.size() == 5; }));
  EXPECT_EQ(cancelled_ec, asio::error::operation_aborted);
  for (const auto& lease : leases) {
    EXPECT_EQ(lease.term, 1u);
    EXPECT_EQ(lease.period, leases[0].period);
  }
  // Waiting while already leader completes at once with the same lease.
  std::optional<leadership_lease> again;
  g.electors[0]->async_wait_for_leadership([&](error_code ec, leadership_lease lease) {
    if (!ec) again = lease;
  });
  ASSERT_TRUE(g.run_until([&] { return again.has_value(); }, 1s));
  EXPECT_EQ(again->period, leases[0].period);
}

TEST(Elector, WaitForLossCompletesAtOnceForAStaleLease) {
  group g(1);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  leadership_lease stale;
  stale.term = 99;
  stale.period = 12345;
  bool done = false;
  g.electors[0]->async_wait_for_loss(stale, [&](error_code ec) { done = !ec; });
  ASSERT_TRUE(g.run_until([&] { return done; }, 1s));
}

TEST(Elector, WaitForChangeObservesEveryChangeByVersion) {
  group g(2);
  std::vector<s3lect::leadership_status> seen;
  std::function<void(std::uint64_t)> watch = [&](std::uint64_t version) {
    g.electors[1]->async_wait_for_change(version, [&](error_code ec, s3lect::leadership_status s) {
      if (ec) return;
      seen.push_back(s);
      watch(s.version);
    });
  };
  watch(0);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  ASSERT_TRUE(
      g.run_until([&] { return !seen.empty() && seen.back().leader_id.rfind("node-", 0) == 0; }));
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].version, seen[i - 1].version);
}

TEST(Elector, WaitForNextElectionCompletesAfterTheGivenTime) {
  group g(1);
  g.start_all();
  std::optional<s3lect::leadership_status> first;
  g.electors[0]->async_wait_for_next_election({}, [&](error_code ec, s3lect::leadership_status s) {
    if (!ec) first = s;
  });
  ASSERT_TRUE(g.run_until([&] { return first.has_value(); }));
  ASSERT_TRUE(first->last_election_time.has_value());
  const auto since = g.wall_now();
  std::optional<s3lect::leadership_status> next;
  g.electors[0]->async_wait_for_next_election(since,
                                              [&](error_code ec, s3lect::leadership_status s) {
                                                if (!ec) next = s;
                                              });
  ASSERT_TRUE(g.run_until([&] { return next.has_value(); }));
  EXPECT_GT(*next->last_election_time, since);
}

TEST(Elector, FailingAcquireHookResignsAndLetsAnotherLead) {
  int hook_calls = 0;
  group g(2, [&](elector_config& config) {
    if (config.server_id == "node-0") {
      config.on_acquire = [&hook_calls](std::uint64_t) -> asio::awaitable<void> {
        ++hook_calls;
        throw std::runtime_error("cannot attach the volume");
        co_return;
      };
    }
  });
  // node-0 starts alone so that it acquires first.
  g.electors[0]->start();
  asio::co_spawn(g.io, record_periods(*g.electors[0], 0, g.periods), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return hook_calls == 1; }));
  g.electors[1]->start();
  asio::co_spawn(g.io, record_periods(*g.electors[1], 1, g.periods), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return g.electors[1]->is_leader(); }));
  EXPECT_FALSE(g.electors[0]->is_leader());
  for (const auto& p : g.periods) EXPECT_EQ(p.node, 1) << "node-0 must never report leadership";
  EXPECT_EQ(g.record()->leader_id, "node-1");
}

TEST(Elector, SlowAcquireHookDoesNotBlockRenewals) {
  bool hook_may_finish = false;
  group g(1, [&](elector_config& config) {
    config.on_acquire = [&hook_may_finish](std::uint64_t) -> asio::awaitable<void> {
      hook_timer timer(co_await asio::this_coro::executor);
      while (!hook_may_finish) {
        timer.expires_after(10ms);
        co_await timer.async_wait(asio::use_awaitable);
      }
    };
  });
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.store->peek("group/leader.json").has_value(); }));
  const auto etag = g.store->peek("group/leader.json")->etag;
  // Longer than the renew deadline: without renewals the elector would demote itself.
  ASSERT_TRUE(g.run_until([&] { return g.store->peek("group/leader.json")->etag != etag; }));
  g.run_until([] { return false; }, 500ms);
  EXPECT_FALSE(g.electors[0]->is_leader()) << "reported before the acquire hook finished";
  hook_may_finish = true;
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  EXPECT_EQ(g.record()->term, 1u);
}

// Hooks run on the application's executor, not on the elector's strand: with the io_context on
// two threads, an acquire hook that holds one thread (blocking work, a synchronous call) leaves
// the other to renew. On the elector's strand it would hold up every renewal.
TEST(Elector, AnAcquireHookThatBlocksItsThreadDelaysNoRenewal) {
  s3lect::test::elector_io on(s3lect::test::elector_io::time::real);
  auto store = std::make_shared<memory_store>();
  memory_storage view(on.io.get_executor(), store);
  std::atomic<bool> renewed_while_blocked{false};
  auto config = fast_config("node-0");
  // The lock's ETag changes when a renewal lands (the record's timestamps change); the
  // store is thread-safe. Leadership is not reported yet, so the elector's counters say nothing.
  config.on_acquire = [&](std::uint64_t) -> asio::awaitable<void> {
    const auto acquired = store->peek("group/leader.json")->etag;
    const auto give_up = steady::now() + 3s;
    while (store->peek("group/leader.json")->etag == acquired && steady::now() < give_up) {
      std::this_thread::sleep_for(1ms);  // Blocks this thread; sampling, not synchronisation.
    }
    renewed_while_blocked = store->peek("group/leader.json")->etag != acquired;
    co_return;
  };
  elector e(on.io.get_executor(), view, config);
  e.start();
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      while (!stop) on.io.run_one_for(5ms);
    });
  }
  const auto deadline = steady::now() + 10s;
  while (!e.is_leader() && steady::now() < deadline) std::this_thread::sleep_for(1ms);
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(renewed_while_blocked) << "no renewal while the acquire hook held its thread";
  EXPECT_TRUE(e.is_leader());
}

// Asio's rule for a pending operation: outstanding work on the executor its handler completes
// on. A wait bound to the application's own io_context keeps that io_context's run() from
// returning until the handler has run there.
TEST(Elector, AWaitBoundToAnotherIoContextIsWorkThereUntilItsHandlerRan) {
  s3lect::test::elector_io on;
  asio::io_context app;
  auto store = std::make_shared<memory_store>();
  memory_storage view(on.io.get_executor(), store);
  elector e(on.io.get_executor(), view, fast_config("node-0"));
  std::optional<error_code> result;
  bool ran_on_app = false;
  e.async_wait_for_leadership(asio::bind_executor(app, [&](error_code ec, leadership_lease) {
    result = ec;
    ran_on_app = app.get_executor().running_in_this_thread();
  }));
  app.poll();  // An io_context without outstanding work stops when polled.
  EXPECT_FALSE(app.stopped()) << "the pending wait is no work on its handler's io_context";
  e.start();
  ASSERT_TRUE(on.run_until([&] { return e.is_leader(); }));
  on.run_for(10ms);
  EXPECT_FALSE(result) << "the handler ran on the elector's io_context";
  app.run();  // Returns once the handler ran: it held the only work.
  ASSERT_TRUE(result);
  EXPECT_FALSE(*result) << result->message();
  EXPECT_TRUE(ran_on_app);
}

// async_stop is terminal: it cannot be undone, so a partial or total cancellation (which
// promise a well-defined state or no effect) is ignored, and a terminal one completes the stop
// with operation_aborted while the elector still stops.
TEST(Elector, AsyncStopHonoursOnlyTerminalCancellation) {
  for (const auto type : {asio::cancellation_type::partial, asio::cancellation_type::total,
                          asio::cancellation_type::terminal}) {
    SCOPED_TRACE(static_cast<int>(type));
    group g(1);
    g.start_all();
    ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
    asio::cancellation_signal signal;
    std::optional<error_code> stopped;
    g.electors[0]->async_stop(
        asio::bind_cancellation_slot(signal.slot(), [&](error_code ec) { stopped = ec; }));
    signal.emit(type);
    ASSERT_TRUE(g.run_until([&] { return stopped.has_value(); }));
    if (type == asio::cancellation_type::terminal) {
      EXPECT_EQ(*stopped, asio::error::operation_aborted);
    } else {
      EXPECT_FALSE(*stopped) << "cancelled by a type it does not support: " << stopped->message();
    }
    ASSERT_TRUE(g.run_until([&] { return !g.electors[0]->status().running; }))
        << "the elector must stop whatever the cancellation";
    EXPECT_FALSE(g.electors[0]->is_leader());
  }
}

TEST(Elector, TakesOverAStaleGoRecordByTheStoresClock) {
  group g(1);
  // A Go s3lect node's record that the store last wrote a minute ago: rule (c) lets us take it
  // at once. Its own lastUpdated says it is fresh (the Go node's clock was an hour ahead): the
  // store's Last-Modified decides, not the writer's or the reader's wall clock.
  const auto stamp = s3lect::test::rfc3339_seconds(std::chrono::system_clock::now() + 1h);
  g.store->poke(
      "group/leader.json",
      std::string(R"({"leaderID":"go-node","leaderAddr":"10.0.0.1:8443","lastUpdated":")") + stamp +
          "\"}",
      g.store->now() - 60s);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  // Waiting for a lease would take a read every frequent interval until it ends.
  EXPECT_EQ(g.views[0]->stats().gets, 1u) << "rule (c) should take it at the first read";
  EXPECT_EQ(g.record()->leader_id, "node-0");
  EXPECT_EQ(g.record()->term, 1u);
}

TEST(Elector, AFreshGoRecordWithAnAncientStampWaitsForTheLease) {
  group g(1);
  // The Go node's clock is an hour behind: its lastUpdated looks an hour old, but the store
  // wrote the record just now. Taking it at once would make two leaders.
  const auto stamp = s3lect::test::rfc3339_seconds(std::chrono::system_clock::now() - 1h);
  g.store->poke(
      "group/leader.json",
      std::string(R"({"leaderID":"go-node","leaderAddr":"10.0.0.1:8443","lastUpdated":")") + stamp +
          "\"}");
  const auto start = g.now();
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  EXPECT_GE(g.now() - start, fast_config("x").lease) << "rule (b): a whole lease after first sight";
}

TEST(Elector, UpdateConfigRefusesANewKeyAndAppliesNewIntervals) {
  group g(1);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  auto changed_key = g.electors[0]->config();
  changed_key.lock_key = "other.json";
  EXPECT_TRUE(g.electors[0]->update_config(changed_key).has_value());
  auto longer = g.electors[0]->config();
  longer.lease = 900ms;
  EXPECT_FALSE(g.electors[0]->update_config(longer).has_value());
  EXPECT_EQ(g.electors[0]->config().lease, 900ms);
  g.run_until([] { return false; }, 400ms);
  EXPECT_TRUE(g.electors[0]->is_leader());
  const auto etag = g.store->peek("group/leader.json")->etag;
  ASSERT_TRUE(g.run_until([&] { return g.store->peek("group/leader.json")->etag != etag; }));
  EXPECT_EQ(g.record()->lease, 900ms);
}

TEST(Elector, ManyElectorsShareOneStorageOnDifferentKeys) {
  s3lect::test::elector_io on;
  auto store = std::make_shared<memory_store>();
  memory_storage shared(on.io.get_executor(), store);
  std::vector<std::unique_ptr<elector>> electors;
  for (int i = 0; i < 20; ++i) {
    electors.push_back(std::make_unique<elector>(on.io.get_executor(), shared,
                                                 fast_config("node", "key-" + std::to_string(i))));
    electors.back()->start();
  }
  auto all_lead = [&] {
    for (auto& e : electors) {
      if (!e->is_leader()) return false;
    }
    return true;
  };
  EXPECT_TRUE(on.run_until(all_lead, 5s));
}

TEST(Elector, RunsSafelyWithTheIoContextOnSeveralThreads) {
  group g(3, {}, group::time::real);  // Real clock: threads race for real, and nobody advances.
  g.start_all();
  // The group's observers touch `periods` on their strand; run them on one thread first, then
  // drive the electors from two threads while this one reads only thread-safe state.
  ASSERT_TRUE(g.run_until([&] { return g.leader_count() == 1; }));
  g.io.restart();
  std::atomic<bool> stop{false};
  std::atomic<int> max_leaders{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      while (!stop) g.io.run_one_for(5ms);
    });
  }
  const auto until = steady::now() + 1500ms;
  while (steady::now() < until) {
    max_leaders = std::max(max_leaders.load(), g.leader_count());
    std::this_thread::sleep_for(1ms);  // Sampling, not synchronisation.
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(max_leaders.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// Regression tests from the review of the coroutine layer. Several simulate a paused process:
// the test stops running the io_context for a while, so that timers which would have fired
// apart become due together, in an order a slow or stopped machine produces.

namespace {

/// Configuration for the tests below whose renewals fail long enough to hit the deadline.
elector_config slow_retry_config(std::string id) {
  auto config = fast_config(std::move(id));
  config.lease = 1500ms;
  config.renew_deadline = 1000ms;
  config.frequent_interval = 100ms;
  config.infrequent_interval = 300ms;
  config.request_timeout = 50ms;
  config.retry.delays = {700ms};  // Worst case 800 ms: fits D - F = 900 ms.
  return config;
}

memory_faults failing_connections() {
  memory_faults faults;
  faults.fail_next = 1'000'000;
  faults.fail_with = s3lect::errc::connect_failed;
  return faults;
}

asio::awaitable<void> resign_whenever_leader(elector& e, int& resignations) {
  for (;;) {
    auto [ec, lease] = co_await e.async_wait_for_leadership(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    auto [resign_ec] = co_await e.async_resign(asio::as_tuple(asio::use_awaitable));
    if (resign_ec == s3lect::errc::stopped) co_return;
    ++resignations;
  }
}

/// Forwards to a memory_storage; can make one call slow, counts the calls that run while it is
/// marked destroyed (it is not really destroyed, so that the test itself stays defined), and
/// shows every PUT's body to `on_put` before the PUT is made.
class probe_storage final : public s3lect::storage {
 public:
  probe_storage(asio::any_io_executor executor, std::shared_ptr<memory_store> store)
      : inner_(std::move(executor), std::move(store)) {}

  executor_type get_executor() const override { return inner_.get_executor(); }

  std::atomic<bool> make_next_call_slow{false};
  std::atomic<bool> in_slow_call{false};
  std::promise<void> slow_call_entered;  // Set once, by the first slow call.
  std::atomic<bool> destroyed{false};
  std::atomic<int> calls_while_destroyed{0};
  std::function<void(const std::string& body)> on_put;  // Set before the elector starts.

 protected:
  void get_impl(std::string key,
                asio::any_completion_handler<s3lect::get_signature> handler) override {
    enter();
    inner_.async_get(std::move(key), std::move(handler));
    leave();
  }
  void put_impl(std::string key, std::string body, s3lect::put_condition condition,
                asio::any_completion_handler<s3lect::put_signature> handler) override {
    enter();
    if (on_put) on_put(body);
    inner_.async_put(std::move(key), std::move(body), std::move(condition), std::move(handler));
    leave();
  }

 private:
  void enter() {
    if (destroyed) ++calls_while_destroyed;
    if (make_next_call_slow.exchange(false)) {
      in_slow_call = true;
      slow_call_entered.set_value();
      // Not synchronisation: a storage call that takes a while, so the destructor runs meanwhile.
      std::this_thread::sleep_for(200ms);
    }
  }
  void leave() {
    if (destroyed) ++calls_while_destroyed;
    in_slow_call = false;
  }

  memory_storage inner_;
};

}  // namespace

// run_read/run_write used to throw asio's "co_await after cancellation" exception (Asio's
// throw_if_cancelled defaults to true) when the cancellation arrived after a retry pause had
// already ended; co_spawn(detached) swallowed it, the core never heard of the operation again
// and the elector was wedged: no reads, no leadership, async_stop never completing.
TEST(Elector, ADemotionMeetingAnEndedRetryPauseLeavesTheElectorWorking) {
  group g(1, [](elector_config& config) { config = slow_retry_config(config.server_id); });
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  const auto gets_before = g.views[0]->stats().gets;
  g.views[0]->set_faults(failing_connections());
  // Renewal at S + F fails, retries at S + F + 700 ms, fails; the re-read that checks whether
  // it landed fails too and pauses 700 ms, past the renew deadline S + D.
  ASSERT_TRUE(g.run_until([&] { return g.views[0]->stats().gets > gets_before; }, 5s));
  g.run_for(20ms);
  // Paused process: the deadline (S + D) and the end of the read's pause come due together.
  g.clock->advance(800ms);
  g.views[0]->set_faults({});
  // The demotion cancels the read whose pause has ended; the read must report that, and the
  // elector retakes its own record at once.
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }, 3s))
      << "the elector stopped working after the demotion";
  bool stopped = false;
  asio::co_spawn(g.io, stop_elector(*g.electors[0], stopped), asio::detached);
  EXPECT_TRUE(g.run_until([&] { return stopped; }, 3s));
}

// Leadership used to be published when the acquire hook finished even if the renew deadline
// had passed meanwhile (the loop handles events before it looks at its timer): waiters got a
// lease that was already void, in a paused process exactly when another node may lead.
TEST(Elector, AnAcquireHookFinishingAfterTheRenewDeadlinePublishesNothing) {
  bool hook_started = false;
  s3lect::detail::boot_clock::time_point hook_start;
  group g(1, [&](elector_config& config) {
    config.frequent_interval = 100ms;
    config.infrequent_interval = 300ms;
    config.on_acquire = [&hook_started, &hook_start, &g](std::uint64_t) -> asio::awaitable<void> {
      if (hook_started) co_return;
      hook_start = g.now();
      hook_started = true;
      hook_timer timer(co_await asio::this_coro::executor);
      timer.expires_at(hook_start + 340ms);  // Just before S + D (D = 400 ms).
      co_await timer.async_wait(asio::use_awaitable);
    };
  });
  int leases = 0;
  g.electors[0]->async_wait_for_leadership([&](error_code ec, leadership_lease) {
    if (!ec) ++leases;
  });
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return hook_started; }));
  memory_faults partition;
  partition.partitioned = true;
  g.views[0]->set_faults(partition);  // Renewals hang: the deadline S + D will pass.
  g.run_for(hook_start + 200ms - g.now());
  // Paused process: the hook's end and the renew deadline come due together, hook first.
  g.clock->advance_to(hook_start + 550ms);
  g.run_until([] { return false; }, 300ms);
  EXPECT_EQ(leases, 0) << "leadership was reported after its renew deadline";
  EXPECT_FALSE(g.electors[0]->is_leader());
}

// Every acquire hook used to be spawned on one cancellation_signal member. A coroutine's
// cancellation state lives in the signal's slot, so spawning the next hook freed the state of
// a previous hook still running (one slow to honour cancellation): a heap-use-after-free that
// ASan reports when the old hook's next operation completes.
TEST(Elector, AnAcquireHookStillCleaningUpWhenTheNextOneStartsIsSafe) {
  int hook_calls = 0;
  bool cleanup_done = false;
  group g(1, [&](elector_config& config) {
    config.on_acquire = [&hook_calls, &cleanup_done](std::uint64_t) -> asio::awaitable<void> {
      if (++hook_calls > 1) co_return;
      co_await asio::this_coro::throw_if_cancelled(false);
      hook_timer timer(co_await asio::this_coro::executor);
      timer.expires_after(5s);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      // Cancelled by the loss: clean up for a while, then give up.
      timer.expires_after(300ms);
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      cleanup_done = true;
      throw std::runtime_error(ec ? "cancelled" : "too slow");
    };
  });
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return hook_calls == 1; }));
  // Another writer releases the lock under our feet: the next renewal gets 412 (leadership
  // lost, the hook cancelled), the re-read finds a released record, we take it again at once
  // and the second hook starts while the first one is still cleaning up.
  s3lect::lock_record released;
  released.leader_id = "operator";
  released.term = 1;
  released.released = true;
  released.nonce = "0123456789abcdef";
  g.store->poke("group/leader.json", s3lect::encode_record(released));
  ASSERT_TRUE(g.run_until([&] { return hook_calls == 2; }));
  EXPECT_FALSE(cleanup_done);
  ASSERT_TRUE(g.run_until([&] { return cleanup_done && g.electors[0]->is_leader(); }));
  EXPECT_EQ(g.record()->term, 2u);
}

// ~elector returned while the loop could still start storage requests (the shutdown only
// reached the strand later), yet the caller may destroy the storage right after the elector.
TEST(Elector, NoStorageCallRunsOrStartsOnceTheDestructorReturned) {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  auto store = std::make_shared<memory_store>();
  probe_storage probe(io.get_executor(), store);
  auto e = std::make_unique<elector>(io.get_executor(), probe, fast_config("a"));
  std::promise<void> leading;
  e->async_wait_for_leadership([&leading](error_code, leadership_lease) { leading.set_value(); });
  e->start();
  // Real time: the io_context runs on a thread of its own, racing the destructor for real.
  std::thread runner([&] { io.run(); });
  ASSERT_EQ(leading.get_future().wait_for(5s), std::future_status::ready);
  probe.make_next_call_slow = true;  // The next renewal's call into the storage.
  const bool caught =
      probe.slow_call_entered.get_future().wait_for(5s) == std::future_status::ready;
  e.reset();
  probe.destroyed = true;  // What the caller may do now.
  // Not synchronisation: a window in which no call may happen (an absence has no event).
  std::this_thread::sleep_for(300ms);
  work.reset();
  io.stop();
  runner.join();
  ASSERT_TRUE(caught);
  EXPECT_EQ(probe.calls_while_destroyed, 0);
}

// The elector's own log lines ("leadership lost" ...) went through the configuration snapshot
// without its mutex, while update_config() replaced it from another thread: the logger's
// std::function could be destroyed while it ran (TSan reports the race, ASan the use after
// free). The sink is slow on that line, so that the replacement lands while it runs.
TEST(Elector, UpdateConfigFromAnotherThreadWhileLeadershipChanges) {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  auto config = fast_config("a");
  config.lease = 400ms;
  config.renew_deadline = 250ms;
  config.frequent_interval = 50ms;  // Resignations hold off 2 F: several cycles a second.
  config.infrequent_interval = 50ms;
  config.request_timeout = 50ms;
  config.retry.delays = {5ms, 10ms};
  auto lines = std::make_shared<std::atomic<int>>(0);
  config.log.level = s3lect::log_level::info;
  config.log.sink = [lines](s3lect::log_level, std::string_view line) {
    // Not synchronisation: a slow sink widens the window in which the replacement lands.
    if (line.rfind("leadership lost", 0) == 0) std::this_thread::sleep_for(3ms);
    ++*lines;
  };
  elector e(io.get_executor(), view, config);
  e.start();             // Real clock: a race between threads, which needs them to run for real.
  int resignations = 0;  // Touched only by the coroutine below, read after join().
  asio::co_spawn(io, resign_whenever_leader(e, resignations), asio::detached);
  std::thread runner([&] { io.run(); });
  const auto until = steady::now() + 1s;
  std::mt19937 random(7);
  while (steady::now() < until) {
    auto next = config;
    next.infrequent_interval = std::chrono::milliseconds(50 + random() % 20);
    EXPECT_FALSE(e.update_config(next).has_value());
    (void)e.status();
    std::this_thread::sleep_for(100us);  // Pacing the other thread over a real second.
  }
  work.reset();
  io.stop();
  runner.join();
  EXPECT_GE(resignations, 3);
}

// update_config on a stopped elector used to replace the whole election core, which forgot
// the writes it had made: its own unreleased record then looked foreign and it waited a full
// lease instead of retaking it at once.
TEST(Elector, UpdateConfigWhileStoppedKeepsTheCoreState) {
  group g(1);
  g.start_all();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  memory_faults partition;
  partition.partitioned = true;
  g.views[0]->set_faults(partition);  // The release fails: our record stays, not released.
  bool stopped = false;
  asio::co_spawn(g.io, stop_elector(*g.electors[0], stopped), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return stopped; }));
  ASSERT_TRUE(g.record().has_value());
  ASSERT_FALSE(g.record()->released);
  auto next = g.electors[0]->config();
  next.infrequent_interval = 500ms;
  ASSERT_FALSE(g.electors[0]->update_config(next).has_value());
  g.views[0]->set_faults({});
  const auto gets_before_restart = g.views[0]->stats().gets;
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  // A foreign-looking record would be read every frequent interval until its lease ended.
  EXPECT_EQ(g.views[0]->stats().gets - gets_before_restart, 1u)
      << "our own record must be retaken at the first read";
  EXPECT_EQ(g.electors[0]->config().infrequent_interval, 500ms);
}

namespace {

asio::awaitable<void> note_loss(elector& e, bool& waiting, bool& lost) {
  const leadership_lease lease = co_await e.async_wait_for_leadership();
  waiting = true;
  co_await e.async_wait_for_loss(lease);
  lost = true;
}

asio::awaitable<void> resign_elector(elector& e, bool& done) {
  co_await e.async_resign();
  done = true;
}

}  // namespace

// A stop or resignation reports the loss before it writes the released record, but the loss
// waiters' completions used to be only queued on the elector's strand when the release write
// started: with a store that answers at once, a follower could read the released record, lead,
// and have its user told so before this elector's user heard of the loss (the stress test's
// safety check caught it as an overlap of 0.6 ms). The release now waits for those completions
// to reach the waiters' executors; here the waiter runs on the io_context, so it has run.
TEST(Elector, TheLossReachesItsWaitersBeforeTheReleasedRecordIsWritten) {
  for (const bool resign : {true, false}) {
    SCOPED_TRACE(resign ? "async_resign" : "async_stop");
    s3lect::test::elector_io on;
    asio::io_context& io = on.io;
    auto store = std::make_shared<memory_store>();
    probe_storage view(io.get_executor(), store);
    elector e(io.get_executor(), view, fast_config("node-0"));
    bool waiting = false;
    bool lost = false;
    std::optional<bool> lost_when_released;
    view.on_put = [&](const std::string& body) {
      const auto record = s3lect::decode_record(body).record;
      if (record && record->released && !lost_when_released) lost_when_released = lost;
    };
    e.start();
    asio::co_spawn(io, note_loss(e, waiting, lost), asio::detached);
    const auto run_until = [&on](const std::function<bool()>& done) {
      return on.run_until(done, 5s);
    };
    ASSERT_TRUE(run_until([&] { return waiting; }));
    bool done = false;
    if (resign) {
      asio::co_spawn(io, resign_elector(e, done), asio::detached);
    } else {
      asio::co_spawn(io, stop_elector(e, done), asio::detached);
    }
    ASSERT_TRUE(run_until([&] { return done; }));
    ASSERT_TRUE(lost_when_released.has_value()) << "no released record was written";
    EXPECT_TRUE(*lost_when_released) << "the released record was written before the loss "
                                        "reached its waiter";
    EXPECT_TRUE(lost);
  }
}
