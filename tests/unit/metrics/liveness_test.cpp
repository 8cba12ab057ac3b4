// The liveness check: first its rules on hand-made facts and times (the sans-I/O assessment),
// then /healthz and /readyz of a metrics_server over electors on the in-memory storage whose
// loop the test freezes by blocking the one thread that runs it.
#include <s3lect/elector.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/metrics_server.hpp>

#include "support/background_io.hpp"
#include "liveness.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <future>
#include <memory>
#include <string>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using detail::boot_clock;
using detail::liveness_facts;

// ---------------------------------------------------------------------------------------------
// The rules, on a clock the test sets.

const boot_clock::time_point t0 = boot_clock::time_point{} + 1000s;

liveness_limits limits_of(std::chrono::milliseconds stall, std::chrono::milliseconds grace) {
  liveness_limits limits;
  limits.max_loop_stall = stall;
  limits.deadline_grace = grace;
  return limits;
}

liveness_facts healthy_follower() {
  liveness_facts facts;
  facts.running = true;
  facts.loop_last_ran = t0;
  facts.cycle_completed = true;
  return facts;
}

TEST(LivenessAssessment, ALeaderIsLiveAndReadyUntilItsDeadlineThenStuckAfterTheGrace) {
  liveness_facts leader = healthy_follower();
  leader.leadership_deadline = t0 + 10s;
  const liveness_limits limits = limits_of(60s, 1s);

  const liveness_report before = detail::assess_liveness(leader, t0 + 9s, limits);
  EXPECT_TRUE(before.live);
  EXPECT_TRUE(before.ready);
  EXPECT_EQ(before.problem, liveness_problem::none);
  EXPECT_EQ(before.since_loop_ran, 9s);
  EXPECT_EQ(before.description, "ok: leader");

  // At the deadline the loop is due to demote it: not ready, not yet stuck.
  const liveness_report at = detail::assess_liveness(leader, t0 + 10s + 500ms, limits);
  EXPECT_TRUE(at.live);
  EXPECT_FALSE(at.ready);
  EXPECT_EQ(at.problem, liveness_problem::leader_stepping_down);

  const liveness_report after = detail::assess_liveness(leader, t0 + 11s + 1ms, limits);
  EXPECT_FALSE(after.live);
  EXPECT_FALSE(after.ready);
  EXPECT_EQ(after.problem, liveness_problem::missed_renew_deadline);
  EXPECT_NE(after.description.find("1001 ms past its renew deadline"), std::string::npos)
      << after.description;
}

TEST(LivenessAssessment, ALoopThatHasNotRunForTheLimitIsStuck) {
  const liveness_facts follower = healthy_follower();
  const liveness_limits limits = limits_of(5s, 1s);
  EXPECT_TRUE(detail::assess_liveness(follower, t0 + 5s, limits).live);
  const liveness_report stalled = detail::assess_liveness(follower, t0 + 5s + 1ms, limits);
  EXPECT_FALSE(stalled.live);
  EXPECT_FALSE(stalled.ready);
  EXPECT_EQ(stalled.problem, liveness_problem::loop_stalled);
  EXPECT_EQ(stalled.description, "stuck: the loop has not run for 5001 ms (limit 5000 ms)");
}

TEST(LivenessAssessment, AFollowerIsReadyOnlyAfterASuccessfulCycle) {
  const liveness_limits limits = limits_of(60s, 1s);
  liveness_facts follower = healthy_follower();
  const liveness_report ok = detail::assess_liveness(follower, t0 + 1s, limits);
  EXPECT_TRUE(ok.live);
  EXPECT_TRUE(ok.ready);
  EXPECT_EQ(ok.description, "ok: follower");

  follower.consecutive_failures = 2;
  const liveness_report failing = detail::assess_liveness(follower, t0 + 1s, limits);
  EXPECT_TRUE(failing.live);
  EXPECT_FALSE(failing.ready);
  EXPECT_EQ(failing.problem, liveness_problem::follower_unhealthy);
  EXPECT_EQ(failing.description, "not ready: 2 election cycles failed in a row");

  follower = healthy_follower();
  follower.cycle_completed = false;
  const liveness_report first = detail::assess_liveness(follower, t0 + 1s, limits);
  EXPECT_TRUE(first.live);
  EXPECT_FALSE(first.ready);
  EXPECT_EQ(first.problem, liveness_problem::follower_unhealthy);
}

TEST(LivenessAssessment, AStoppedElectorIsNeitherStuckNorReady) {
  liveness_facts stopped = healthy_follower();
  stopped.running = false;
  const liveness_report report = detail::assess_liveness(stopped, t0 + 1h, limits_of(1s, 1s));
  EXPECT_TRUE(report.live);
  EXPECT_FALSE(report.ready);
  EXPECT_EQ(report.problem, liveness_problem::not_running);
}

TEST(LivenessAssessment, TheDefaultStallLimitCoversAStableFollowersWaitAndARead) {
  elector_config config;
  config.infrequent_interval = 30s;
  config.request_timeout = 1s;
  const auto worst_read = config.retry.worst_case(config.request_timeout);
  EXPECT_EQ(detail::resolved_limits({}, config).max_loop_stall, 2 * (30s + worst_read));
  EXPECT_EQ(detail::resolved_limits(limits_of(7s, 1s), config).max_loop_stall, 7s);
}

// ---------------------------------------------------------------------------------------------
// /healthz and /readyz over real electors.

struct probe_reply {
  int status = 0;
  std::string body;
};

/// GET `path` on a fresh connection to `endpoint`; the status code and the body.
probe_reply probe(const tcp::endpoint& endpoint, const std::string& path) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(endpoint);
  const timeval receive_timeout{10, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &receive_timeout,
               sizeof receive_timeout);
  asio::write(socket,
              asio::buffer("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string raw;
  boost::system::error_code ignored;
  asio::read(socket, asio::dynamic_buffer(raw), ignored);
  probe_reply reply;
  if (raw.rfind("HTTP/1.1 ", 0) == 0) reply.status = std::stoi(raw.substr(9, 3));
  const auto body = raw.find("\r\n\r\n");
  if (body != std::string::npos) reply.body = raw.substr(body + 4);
  return reply;
}

// Timeouts with room for a loaded machine (a TSan build stalls its io thread for tens of
// milliseconds): only the frozen loop may miss a deadline, and a follower's reads succeed.
constexpr auto renew_deadline = 2000ms;
elector_config quick_config(std::string id) {
  elector_config config;
  config.lock_key = "jobs/liveness.json";
  config.server_id = std::move(id);
  config.lease = 3000ms;
  config.renew_deadline = renew_deadline;
  config.frequent_interval = 100ms;
  config.infrequent_interval = 300ms;
  config.request_timeout = 500ms;
  config.retry.delays = {10ms, 20ms};
  return config;
}

/// Electors on one thread (which the test can block), their probes on another.
struct probed_group {
  test::background_io elector_thread;
  test::background_io server_thread;
  std::shared_ptr<memory_store> store = std::make_shared<memory_store>();

  /// Blocks the electors' thread until the returned promise is set: their loops stop running.
  std::shared_ptr<std::promise<void>> freeze() {
    auto release = std::make_shared<std::promise<void>>();
    auto entered = std::make_shared<std::promise<void>>();
    asio::post(elector_thread.io, [released = release->get_future().share(), entered] {
      entered->set_value();
      released.wait();
    });
    entered->get_future().wait();
    return release;
  }

  /// Waits `duration` on the server thread's clock. Only used while the loops are frozen: then
  /// nothing else can change, and the wait is for time itself to pass a deadline.
  void let_time_pass(std::chrono::milliseconds duration) {
    asio::steady_timer timer(server_thread.io, duration);
    timer.async_wait(asio::use_future).get();
  }
};

metrics_server_config probe_config(const elector& watched, liveness_limits limits) {
  metrics_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.render = [] { return std::string(); };
  config.liveness = [&watched, limits] { return watched.liveness(limits); };
  return config;
}

void stop_server(metrics_server& server) {
  auto stopped = server.async_stop(asio::use_future);
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
}

TEST(ElectorLiveness, HealthzGoesUnavailableWhenALeadersLoopIsFrozen) {
  probed_group group;
  memory_storage view(group.elector_thread.io.get_executor(), group.store);
  elector leader(group.elector_thread.io.get_executor(), view, quick_config("node-a"));
  // A stall limit far above the deadline: what must trip here is the missed deadline.
  metrics_server server(group.server_thread.io.get_executor(),
                        probe_config(leader, limits_of(60s, 200ms)));
  ASSERT_FALSE(server.start());
  const tcp::endpoint endpoint = server.local_endpoint();

  EXPECT_EQ(probe(endpoint, "/readyz").status, 503) << "not started yet";
  EXPECT_EQ(probe(endpoint, "/healthz").status, 200);
  leader.start();
  auto gained = leader.async_wait_for_leadership(asio::use_future);
  ASSERT_EQ(gained.wait_for(10s), std::future_status::ready);
  const leadership_lease lease = gained.get();
  EXPECT_EQ(probe(endpoint, "/healthz").status, 200);
  const probe_reply ready = probe(endpoint, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok: leader\n");

  const auto release = group.freeze();
  // The deadline is at most renew_deadline after the last renewal, which was before the freeze.
  group.let_time_pass(renew_deadline + 200ms + 100ms);
  const probe_reply stuck = probe(endpoint, "/healthz");
  EXPECT_EQ(stuck.status, 503);
  EXPECT_NE(stuck.body.find("past its renew deadline without stepping down"), std::string::npos)
      << stuck.body;
  EXPECT_EQ(probe(endpoint, "/readyz").status, 503);
  EXPECT_EQ(leader.liveness(limits_of(60s, 200ms)).problem,
            liveness_problem::missed_renew_deadline);

  // Thawed, the loop demotes the leader at once, and the check recovers.
  auto lost = leader.async_wait_for_loss(lease, asio::use_future);
  release->set_value();
  ASSERT_EQ(lost.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(probe(endpoint, "/healthz").status, 200);
  stop_server(server);
}

TEST(ElectorLiveness, HealthzGoesUnavailableWhenAFollowersLoopStopsRunning) {
  probed_group group;
  memory_storage view_a(group.elector_thread.io.get_executor(), group.store);
  memory_storage view_b(group.elector_thread.io.get_executor(), group.store);
  elector leader(group.elector_thread.io.get_executor(), view_a, quick_config("node-a"));
  elector follower(group.elector_thread.io.get_executor(), view_b, quick_config("node-b"));
  // Above the longest healthy gap between two runs of the loop: I, then a read of up to W
  // (three attempts of 500 ms and 30 ms of delays).
  const liveness_limits limits = limits_of(2500ms, 200ms);
  metrics_server server(group.server_thread.io.get_executor(), probe_config(follower, limits));
  ASSERT_FALSE(server.start());
  const tcp::endpoint endpoint = server.local_endpoint();

  leader.start();
  auto gained = leader.async_wait_for_leadership(asio::use_future);
  ASSERT_EQ(gained.wait_for(10s), std::future_status::ready);
  follower.start();
  auto settled = follower.async_wait_for_next_election({}, asio::use_future);
  ASSERT_EQ(settled.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(settled.get().leader_id, "node-a");
  EXPECT_EQ(probe(endpoint, "/healthz").status, 200);
  const probe_reply ready = probe(endpoint, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok: follower\n");

  const auto release = group.freeze();
  group.let_time_pass(limits.max_loop_stall + 100ms);
  const probe_reply stuck = probe(endpoint, "/healthz");
  EXPECT_EQ(stuck.status, 503);
  EXPECT_NE(stuck.body.find("the loop has not run for"), std::string::npos) << stuck.body;
  EXPECT_EQ(follower.liveness(limits).problem, liveness_problem::loop_stalled);

  release->set_value();
  auto next =
      follower.async_wait_for_next_election(std::chrono::system_clock::now(), asio::use_future);
  ASSERT_EQ(next.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(probe(endpoint, "/healthz").status, 200);
  stop_server(server);
}

TEST(ElectorLiveness, ProbesAreNotFoundWithoutALivenessFunction) {
  test::background_io server_thread;
  metrics_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.render = [] { return std::string("metrics\n"); };
  metrics_server server(server_thread.io.get_executor(), config);
  ASSERT_FALSE(server.start());
  EXPECT_EQ(probe(server.local_endpoint(), "/healthz").status, 404);
  EXPECT_EQ(probe(server.local_endpoint(), "/readyz").status, 404);
  EXPECT_EQ(probe(server.local_endpoint(), "/metrics").body, "metrics\n");
  stop_server(server);
}

}  // namespace
}  // namespace s3lect
