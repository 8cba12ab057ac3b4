// health_handler without sockets: reads, and watches held until a change, a timeout, a stop or
// a cancellation, against a fake leadership source.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>

#include "support/fake_leadership_source.hpp"

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using test::fake_leadership_source;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
const std::string path = "/health/leadership";
const std::string record = R"({"leaderID":"node-a","term":5,"nonce":"n1"})";

std::string header(const health_response& response, std::string_view name) {
  for (const auto& [field, value] : response.headers) {
    if (field == name) return value;
  }
  return "<absent>";
}

health_request get(std::string query = {}) {
  return {"GET", query.empty() ? path : path + "?" + query};
}

/// Runs `action` after `delay`: drives the source while a watch is held.
asio::awaitable<void> after(std::chrono::milliseconds delay, std::function<void()> action) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await timer.async_wait(asio::use_awaitable);
  action();
}

class HealthHandler : public ::testing::Test {
 protected:
  void SetUp() override { source.set_leader(5, record); }

  void run(asio::awaitable<void> body) {
    io.restart();
    auto done = asio::co_spawn(io, std::move(body), asio::use_future);
    io.run_for(20s);
    ASSERT_EQ(done.wait_for(0s), std::future_status::ready) << "test did not finish";
    done.get();
  }

  void later(std::chrono::milliseconds delay, std::function<void()> action) {
    asio::co_spawn(io, after(delay, std::move(action)), asio::detached);
  }

  health_handler_config config;
  asio::io_context io;
  fake_leadership_source source{io.get_executor()};
};

struct timed_answer {
  boost::system::error_code ec;
  health_response response;
  clock_type::duration took;
};

asio::awaitable<timed_answer> timed(health_handler& handler, health_request request) {
  const auto start = clock_type::now();
  auto [ec, response] = co_await handler.async_handle(std::move(request), use_tuple);
  co_return timed_answer{ec, std::move(response), clock_type::now() - start};
}

asio::awaitable<void> expect_answer(health_handler& handler, health_request request,
                                    unsigned status, std::string watch_header,
                                    std::chrono::milliseconds at_least,
                                    std::chrono::milliseconds at_most) {
  const timed_answer answer = co_await timed(handler, std::move(request));
  EXPECT_FALSE(answer.ec) << answer.ec.message();
  EXPECT_EQ(answer.response.status, status) << answer.response.body;
  EXPECT_EQ(header(answer.response, "X-S3lect-Watch"), watch_header);
  EXPECT_GE(answer.took, at_least);
  EXPECT_LE(answer.took, at_most);
}

TEST_F(HealthHandler, ReadAnswersAtOnceWithRecord) {
  health_handler handler(io.get_executor(), source, config);
  const health_response sync = handler.handle(get());
  EXPECT_EQ(sync.status, 200u);
  EXPECT_NE(sync.body.find(R"("leaseRemainingMs":10000)"), std::string::npos) << sync.body;
  run(expect_answer(handler, get(), 200, "<absent>", 0ms, 1s));
  source.set_follower("node-b", 6);
  EXPECT_EQ(handler.handle(get()).status, 404u);
  EXPECT_EQ(handler.handle({"PUT", path}).status, 405u);
  EXPECT_EQ(handler.handle({"GET", "/elsewhere"}).status, 404u);
  EXPECT_EQ(handler.handle(get("watch=x&term=1")).status, 400u);
}

TEST_F(HealthHandler, WatchReturnsWhenTermChanges) {
  health_handler handler(io.get_executor(), source, config);
  later(100ms, [&] {
    EXPECT_EQ(handler.active_watches(), 1u);
    source.set_leader(6, R"({"leaderID":"node-a","term":6})");
  });
  run(expect_answer(handler, get("watch=10000&term=5"), 200, "changed", 50ms, 3s));
  EXPECT_EQ(handler.active_watches(), 0u);
  EXPECT_EQ(source.waiters(), 0u);
}

TEST_F(HealthHandler, WatchReturnsOnDemotion) {
  health_handler handler(io.get_executor(), source, config);
  later(100ms, [&] { source.set_follower("", 5); });
  run(expect_answer(handler, get("watch=10000&term=5"), 404, "changed", 50ms, 3s));
}

TEST_F(HealthHandler, WatchOfAnotherTermAnswersAtOnce) {
  health_handler handler(io.get_executor(), source, config);
  run(expect_answer(handler, get("watch=10000&term=4"), 200, "changed", 0ms, 1s));
  source.set_follower("node-b", 6);
  run(expect_answer(handler, get("watch=10000&term=6"), 404, "changed", 0ms, 1s));
}

TEST_F(HealthHandler, WatchTimesOutWithCurrentState) {
  health_handler handler(io.get_executor(), source, config);
  run(expect_answer(handler, get("watch=300&term=5"), 200, "timeout", 300ms, 3s));
}

asio::awaitable<void> expect_newest_record_after_timeout(health_handler& handler) {
  const timed_answer answer = co_await timed(handler, get("watch=400&term=5"));
  EXPECT_EQ(header(answer.response, "X-S3lect-Watch"), "timeout");
  EXPECT_GE(answer.took, 400ms);
  EXPECT_NE(answer.response.body.find("n2"), std::string::npos) << answer.response.body;
}

TEST_F(HealthHandler, WatchKeepsHoldingThroughChangesThatKeepTheTerm) {
  health_handler handler(io.get_executor(), source, config);
  // A version bump with the same term (e.g. a new leader_id view) is not what the watch waits
  // for; the answer then carries the newest record.
  later(50ms, [&] { source.set_leader(5, R"({"leaderID":"node-a","term":5,"nonce":"n2"})"); });
  run(expect_newest_record_after_timeout(handler));
}

TEST_F(HealthHandler, WatchIsShortenedToMaxWatch) {
  config.max_watch = 200ms;
  health_handler handler(io.get_executor(), source, config);
  run(expect_answer(handler, get("watch=60000&term=5"), 200, "timeout", 200ms, 3s));
}

TEST_F(HealthHandler, WatchDisabledIsRefused) {
  config.max_watch = 0ms;
  health_handler handler(io.get_executor(), source, config);
  run(expect_answer(handler, get("watch=60000&term=5"), 200, "refused", 0ms, 1s));
}

TEST_F(HealthHandler, SynchronousHandleNeverHolds) {
  health_handler handler(io.get_executor(), source, config);
  EXPECT_EQ(header(handler.handle(get("watch=60000&term=5")), "X-S3lect-Watch"), "refused");
  EXPECT_EQ(header(handler.handle(get("watch=60000&term=4")), "X-S3lect-Watch"), "changed");
}

TEST_F(HealthHandler, WatchersBeyondTheCapAreAnsweredAtOnce) {
  config.max_watchers = 1;
  health_handler handler(io.get_executor(), source, config);
  // The first watch is held; the second is refused at once; stop() then answers the first.
  asio::co_spawn(io, expect_answer(handler, get("watch=10000&term=5"), 200, "stopping", 100ms, 3s),
                 asio::detached);
  later(100ms, [&] {
    EXPECT_EQ(handler.active_watches(), 1u);
    asio::co_spawn(io, expect_answer(handler, get("watch=10000&term=5"), 200, "refused", 0ms, 1s),
                   asio::detached);
  });
  later(200ms, [&] { handler.stop(); });
  run(after(0ms, [] {}));
  EXPECT_EQ(handler.active_watches(), 0u);
  // After stop() watches are not held.
  run(expect_answer(handler, get("watch=10000&term=5"), 200, "stopping", 0ms, 1s));
}

/// A watch on term 5 from `source`, by a client with a verified certificate or not.
health_request watch_from(std::string source, bool verified) {
  health_request request = get("watch=10000&term=5");
  request.source = std::move(source);
  request.verified_client = verified;
  return request;
}

// docs/peer-mode.md#watch-slots: one anonymous watch per source here; a verified client's watch
// takes the oldest anonymous slot, which is answered `refused` at once.
TEST_F(HealthHandler, AVerifiedWatchTakesTheOldestAnonymousSlotAndSourcesGetTheirShare) {
  config.max_watchers = 2;
  config.max_watchers_per_source = 1;
  health_handler handler(io.get_executor(), source, config);
  asio::co_spawn(io,
                 expect_answer(handler, watch_from("10.0.0.1", false), 200, "refused", 150ms, 3s),
                 asio::detached);
  asio::co_spawn(io,
                 expect_answer(handler, watch_from("10.0.0.2", false), 200, "stopping", 250ms, 3s),
                 asio::detached);
  later(50ms, [&] {
    EXPECT_EQ(handler.active_watches(), 2u);
    asio::co_spawn(io,
                   expect_answer(handler, watch_from("10.0.0.2", false), 200, "refused", 0ms, 1s),
                   asio::detached);
  });
  // Held until the stop: "stopping", not "refused". No lower bound on how long: the two timers
  // run independently, and a late 150 ms one on a busy machine leaves less than 100 ms.
  later(150ms, [&] {
    asio::co_spawn(io,
                   expect_answer(handler, watch_from("10.0.0.1", true), 200, "stopping", 0ms, 3s),
                   asio::detached);
  });
  later(250ms, [&] {
    EXPECT_EQ(handler.active_watches(), 2u) << "the verified watch and 10.0.0.2's";
    handler.stop();
  });
  run(after(0ms, [] {}));
  EXPECT_EQ(handler.active_watches(), 0u);
}

asio::awaitable<void> expect_cancelled(health_handler& handler, asio::cancellation_signal& signal) {
  auto token = asio::bind_cancellation_slot(signal.slot(), use_tuple);
  const auto start = clock_type::now();
  auto [ec, response] = co_await handler.async_handle(get("watch=10000&term=5"), token);
  EXPECT_EQ(ec, asio::error::operation_aborted);
  EXPECT_LT(clock_type::now() - start, 3s);
}

TEST_F(HealthHandler, AnyCancellationTypeAbortsAWatch) {
  health_handler handler(io.get_executor(), source, config);
  for (const auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                          asio::cancellation_type::total}) {
    asio::cancellation_signal signal;
    later(50ms, [&] { signal.emit(type); });
    run(expect_cancelled(handler, signal));
    EXPECT_EQ(handler.active_watches(), 0u);
    EXPECT_EQ(source.waiters(), 0u);
  }
  // Still usable.
  run(expect_answer(handler, get("watch=100&term=5"), 200, "timeout", 100ms, 3s));
}

asio::awaitable<void> expect_stopped(health_handler& handler) {
  auto [ec, response] = co_await handler.async_handle(get("watch=10000&term=5"), use_tuple);
  EXPECT_EQ(ec, errc::stopped);
  EXPECT_EQ(response.status, 503u);
}

TEST_F(HealthHandler, DestroyingTheHandlerCompletesPendingWatches) {
  auto handler = std::make_unique<health_handler>(io.get_executor(), source, config);
  later(100ms, [&] { handler.reset(); });
  run(expect_stopped(*handler));
}

TEST_F(HealthHandler, ConstructorRefusesInvalidConfig) {
  config.path = "no-slash";
  try {
    health_handler handler(io.get_executor(), source, config);
    FAIL() << "no exception";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("health_handler_config.path"), std::string::npos);
  }
}

}  // namespace
}  // namespace s3lect
