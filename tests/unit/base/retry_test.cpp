// The retry policy: the sans-I/O schedule without any clock, then the awaitable with tiny delays.
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/retry.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using s3lect::errc;
using s3lect::retry_policy;
using s3lect::retry_schedule;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// retry_schedule and retry_policy: no I/O, no sleeps.

TEST(RetrySchedule, DefaultIsImmediateThen100msThen1sThenGiveUp) {
  retry_schedule schedule(retry_policy{});
  EXPECT_EQ(schedule.attempts(), 1);
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::optional<milliseconds>(100ms));
  EXPECT_EQ(schedule.attempts(), 2);
  EXPECT_EQ(schedule.after_failure(errc::server_error), std::optional<milliseconds>(1000ms));
  EXPECT_EQ(schedule.attempts(), 3);
  EXPECT_FALSE(schedule.gave_up());
  EXPECT_EQ(schedule.after_failure(errc::connection_lost), std::nullopt);
  EXPECT_TRUE(schedule.gave_up());
  EXPECT_EQ(schedule.attempts(), 3);
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::nullopt) << "giving up is final";
}

TEST(RetrySchedule, EveryTransientErrorIsRetried) {
  for (const errc e : {errc::server_error, errc::throttled, errc::timeout, errc::resolve_failed,
                       errc::connect_failed, errc::connection_lost, errc::protocol_error,
                       errc::tls_handshake_failed}) {
    retry_schedule schedule(retry_policy{});
    EXPECT_EQ(schedule.after_failure(e), std::optional<milliseconds>(100ms))
        << make_error_code(e).message();
  }
}

TEST(RetrySchedule, VerdictsAreNotRetried) {
  for (const errc e : {errc::precondition_failed, errc::conflict, errc::outcome_unknown,
                       errc::access_denied, errc::signature_mismatch, errc::bad_request,
                       errc::no_such_bucket, errc::tls_verification_failed, errc::stopped}) {
    retry_schedule schedule(retry_policy{});
    EXPECT_EQ(schedule.after_failure(e), std::nullopt) << make_error_code(e).message();
    EXPECT_EQ(schedule.attempts(), 1);
    EXPECT_TRUE(schedule.gave_up());
  }
}

TEST(RetrySchedule, CancellationIsNotRetried) {
  retry_schedule schedule(retry_policy{});
  EXPECT_EQ(schedule.after_failure(asio::error::operation_aborted), std::nullopt);
  EXPECT_EQ(schedule.attempts(), 1);
}

TEST(RetrySchedule, CallerVerdictOverridesClassification) {
  retry_schedule schedule(retry_policy{});
  EXPECT_EQ(schedule.after_failure(errc::precondition_failed, true),
            std::optional<milliseconds>(100ms));
  EXPECT_EQ(schedule.after_failure(errc::timeout, false), std::nullopt);
  EXPECT_EQ(schedule.attempts(), 2);
}

TEST(RetrySchedule, CancellationAndStoppedGiveUpWhateverTheCallerSays) {
  retry_schedule aborted(retry_policy{});
  EXPECT_EQ(aborted.after_failure(asio::error::operation_aborted, true), std::nullopt);
  retry_schedule stopped(retry_policy{});
  EXPECT_EQ(stopped.after_failure(errc::stopped, true), std::nullopt);
}

TEST(RetrySchedule, CustomDelaysInOrder) {
  retry_policy policy;
  policy.delays = {0ms, 5ms, 7ms};
  retry_schedule schedule(policy);
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::optional<milliseconds>(0ms));
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::optional<milliseconds>(5ms));
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::optional<milliseconds>(7ms));
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::nullopt);
  EXPECT_EQ(schedule.attempts(), 4);
}

TEST(RetrySchedule, NoDelaysMeansOneAttempt) {
  retry_policy policy;
  policy.delays.clear();
  retry_schedule schedule(policy);
  EXPECT_EQ(schedule.after_failure(errc::timeout), std::nullopt);
  EXPECT_EQ(schedule.attempts(), 1);
}

TEST(RetryPolicy, ValidateAcceptsDefaultsAndEmpty) {
  EXPECT_EQ(retry_policy{}.validate(), std::nullopt);
  retry_policy single;
  single.delays.clear();
  EXPECT_EQ(single.validate(), std::nullopt);
}

TEST(RetryPolicy, ValidateNamesTheNegativeDelay) {
  retry_policy policy;
  policy.delays = {10ms, -1ms, -2ms};
  const std::optional<std::string> problem = policy.validate();
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("delays[1]"), std::string::npos) << *problem;
}

TEST(RetryPolicy, WorstCaseCountsEveryAttemptAndDelay) {
  EXPECT_EQ(retry_policy{}.worst_case(5000ms), 3 * 5000ms + 100ms + 1000ms);
  retry_policy single;
  single.delays.clear();
  EXPECT_EQ(single.worst_case(3000ms), 3000ms);
}

TEST(RetryPolicy, WorstCaseOfUnboundedAttemptsIsUnbounded) {
  EXPECT_EQ(retry_policy{}.worst_case(0ms), milliseconds::max());
  retry_policy huge;
  huge.delays = {milliseconds::max(), 1ms};
  EXPECT_EQ(huge.worst_case(1ms), milliseconds::max());
}

// ---------------------------------------------------------------------------------------------
// async_retry: attempts are scripted; delays are a few milliseconds or never elapse.

using attempt = std::tuple<error_code, int>;

// What successive attempts return; attempts past the end succeed. Each attempt yields its number.
struct script {
  std::vector<error_code> failures;
  int calls = 0;
  // When set, every attempt waits on this timer and ignores cancellation while doing so.
  asio::steady_timer* gate = nullptr;
};

asio::awaitable<attempt> scripted_attempt(std::shared_ptr<script> plan) {
  const int number = ++plan->calls;
  if (plan->gate != nullptr) {
    auto ignoring_cancellation = asio::bind_cancellation_slot(asio::cancellation_slot(),
                                                              asio::as_tuple(asio::use_awaitable));
    co_await plan->gate->async_wait(ignoring_cancellation);
  }
  const auto index = static_cast<std::size_t>(number - 1);
  const error_code ec = index < plan->failures.size() ? plan->failures[index] : error_code{};
  const attempt result{ec, number};
  co_return result;
}

// The callable handed to async_retry: a named object, as the GCC 12 rule asks.
struct scripted_op {
  std::shared_ptr<script> plan;
  asio::awaitable<attempt> operator()() const { return scripted_attempt(plan); }
};

struct spawned {
  bool done = false;
  std::exception_ptr exception;
  attempt result;
};

template <class Awaitable>
std::shared_ptr<spawned> spawn(asio::io_context& io, Awaitable task,
                               asio::cancellation_slot slot = {}) {
  auto out = std::make_shared<spawned>();
  asio::co_spawn(io, std::move(task),
                 asio::bind_cancellation_slot(slot, [out](std::exception_ptr e, attempt r) {
                   out->done = true;
                   out->exception = e;
                   out->result = r;
                 }));
  return out;
}

retry_policy tiny_delays() {
  retry_policy policy;
  policy.delays = {1ms, 2ms};
  return policy;
}

retry_policy endless_delay() {
  retry_policy policy;
  policy.delays = {std::chrono::hours(1)};
  return policy;
}

TEST(AsyncRetry, FirstAttemptSucceeds) {
  asio::io_context io;
  auto plan = std::make_shared<script>();
  const auto out = spawn(io, s3lect::async_retry(tiny_delays(), scripted_op{plan}));
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_FALSE(out->exception);
  EXPECT_EQ(std::get<0>(out->result), error_code{});
  EXPECT_EQ(std::get<1>(out->result), 1);
  EXPECT_EQ(plan->calls, 1);
}

TEST(AsyncRetry, SucceedsOnSecondAttemptAfterTheFirstDelay) {
  asio::io_context io;
  auto plan = std::make_shared<script>(script{{errc::timeout}});
  const auto started = std::chrono::steady_clock::now();
  const auto out = spawn(io, s3lect::async_retry(tiny_delays(), scripted_op{plan}));
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_EQ(std::get<0>(out->result), error_code{});
  EXPECT_EQ(std::get<1>(out->result), 2);
  EXPECT_EQ(plan->calls, 2);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1ms);
}

TEST(AsyncRetry, GivesUpWithTheLastError) {
  asio::io_context io;
  auto plan = std::make_shared<script>(
      script{{errc::timeout, errc::server_error, errc::throttled, errc::timeout}});
  const auto started = std::chrono::steady_clock::now();
  const auto out = spawn(io, s3lect::async_retry(tiny_delays(), scripted_op{plan}));
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_FALSE(out->exception);
  EXPECT_EQ(std::get<0>(out->result), errc::throttled);
  EXPECT_EQ(std::get<1>(out->result), 3);
  EXPECT_EQ(plan->calls, 3);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 3ms);
}

TEST(AsyncRetry, VerdictReturnsAtOnce) {
  asio::io_context io;
  auto plan = std::make_shared<script>(script{{errc::precondition_failed}});
  const auto out = spawn(io, s3lect::async_retry(endless_delay(), scripted_op{plan}));
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_EQ(std::get<0>(out->result), errc::precondition_failed);
  EXPECT_EQ(plan->calls, 1);
}

// Retries 409 (outcome undecided) and nothing else: the caller's own classification.
struct retry_conflicts_only {
  bool operator()(const error_code& ec) const { return ec == errc::conflict; }
};

TEST(AsyncRetry, PredicateOverridesWhichErrorsAreRetried) {
  asio::io_context io;
  auto plan = std::make_shared<script>(script{{errc::conflict, errc::timeout}});
  const auto out =
      spawn(io, s3lect::async_retry(tiny_delays(), scripted_op{plan}, retry_conflicts_only{}));
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_EQ(std::get<0>(out->result), errc::timeout) << "timeout is not retried by this predicate";
  EXPECT_EQ(plan->calls, 2);
}

TEST(AsyncRetry, CancellationInterruptsTheDelay) {
  asio::io_context io;
  asio::cancellation_signal cancel;
  auto plan = std::make_shared<script>(script{{errc::timeout}});
  const auto out =
      spawn(io, s3lect::async_retry(endless_delay(), scripted_op{plan}), cancel.slot());
  io.poll();  // First attempt fails; the retry now waits its one-hour delay.
  ASSERT_FALSE(out->done);
  ASSERT_EQ(plan->calls, 1);
  cancel.emit(asio::cancellation_type::terminal);
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_FALSE(out->exception);
  EXPECT_EQ(std::get<0>(out->result), asio::error::operation_aborted);
  EXPECT_EQ(std::get<1>(out->result), 1);
  EXPECT_EQ(plan->calls, 1);
}

TEST(AsyncRetry, AttemptThatIgnoredCancellationIsNotRetried) {
  asio::io_context io;
  asio::steady_timer gate(io, asio::steady_timer::time_point::max());
  asio::cancellation_signal cancel;
  auto plan = std::make_shared<script>(script{{errc::timeout}, 0, &gate});
  const auto out =
      spawn(io, s3lect::async_retry(endless_delay(), scripted_op{plan}), cancel.slot());
  io.poll();  // The first attempt now waits on the gate, deaf to cancellation.
  ASSERT_EQ(plan->calls, 1);
  cancel.emit(asio::cancellation_type::terminal);
  gate.cancel();  // The attempt ends with a transient error after the cancellation.
  io.run();
  ASSERT_TRUE(out->done);
  EXPECT_FALSE(out->exception);
  EXPECT_EQ(std::get<0>(out->result), asio::error::operation_aborted);
  EXPECT_EQ(plan->calls, 1);
}

asio::awaitable<std::size_t> retry_or_deadline(std::shared_ptr<script> plan) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer deadline(co_await asio::this_coro::executor, 1ms);
  auto retry = s3lect::async_retry(endless_delay(), scripted_op{plan});
  auto expiry = deadline.async_wait(asio::use_awaitable);
  const auto winner = co_await (std::move(retry) || std::move(expiry));
  co_return winner.index();
}

TEST(AsyncRetry, LosingAnOrRaceCancelsTheDelay) {
  asio::io_context io;
  auto plan = std::make_shared<script>(script{{errc::timeout}});
  std::optional<std::size_t> winner;
  asio::co_spawn(io, retry_or_deadline(plan), [&](std::exception_ptr e, std::size_t index) {
    EXPECT_FALSE(e);
    winner = index;
  });
  io.run();  // Returns only if the hour-long delay was interrupted.
  EXPECT_EQ(winner, std::optional<std::size_t>(1));
  EXPECT_EQ(plan->calls, 1);
}

// The pattern the header documents: a named lambda that starts the storage operation.
asio::awaitable<std::tuple<error_code, s3lect::get_result>> read_with_retry(
    s3lect::storage& storage, retry_policy policy) {
  auto read = [&storage] { return storage.async_get("lock", asio::as_tuple(asio::use_awaitable)); };
  co_return co_await s3lect::async_retry(policy, read);
}

TEST(AsyncRetry, RetriesAStorageRequest) {
  asio::io_context io;
  auto store = std::make_shared<s3lect::memory_store>();
  store->poke("lock", "held");
  s3lect::memory_storage view(io.get_executor(), store);
  s3lect::memory_faults faults;
  faults.fail_next = 2;
  view.set_faults(faults);
  std::optional<std::tuple<error_code, s3lect::get_result>> outcome;
  asio::co_spawn(io, read_with_retry(view, tiny_delays()),
                 [&](std::exception_ptr e, std::tuple<error_code, s3lect::get_result> r) {
                   EXPECT_FALSE(e);
                   outcome = std::move(r);
                 });
  io.run();
  ASSERT_TRUE(outcome);
  EXPECT_EQ(std::get<0>(*outcome), error_code{});
  ASSERT_TRUE(std::get<1>(*outcome).found);
  EXPECT_EQ(std::get<1>(*outcome).found->body, "held");
  EXPECT_EQ(view.stats().gets, 3u);
}

TEST(AsyncRetry, CancellationReachesTheRunningAttempt) {
  asio::io_context io;
  s3lect::memory_storage view(io.get_executor(), std::make_shared<s3lect::memory_store>());
  s3lect::memory_faults faults;
  faults.partitioned = true;
  view.set_faults(faults);
  asio::cancellation_signal cancel;
  std::optional<error_code> result;
  asio::co_spawn(
      io, read_with_retry(view, endless_delay()),
      asio::bind_cancellation_slot(
          cancel.slot(), [&](std::exception_ptr e, std::tuple<error_code, s3lect::get_result> r) {
            EXPECT_FALSE(e);
            result = std::get<0>(r);
          }));
  io.poll();
  ASSERT_EQ(view.pending(), 1u);
  cancel.emit(asio::cancellation_type::terminal);
  io.run();
  EXPECT_EQ(result, std::optional<error_code>(asio::error::operation_aborted));
  EXPECT_EQ(view.stats().gets, 1u);
}

}  // namespace
