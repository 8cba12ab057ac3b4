// The waiter list behind every async_wait_* of the elector: any number of waiters, each
// completed once, individually cancellable, completed on its own executor, never inline.
#include "waiter_list.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

namespace asio = boost::asio;
using boost::system::error_code;
using s3lect::detail::waiter_list;

namespace {

struct recorder {
  int calls = 0;
  error_code ec;
  int value = -1;
};

struct record_into {
  recorder* r;
  void operator()(error_code ec, int value) const {
    ++r->calls;
    r->ec = ec;
    r->value = value;
  }
};

// Completions queued on `io` and run there: the elector's strand and application executor in one.
s3lect::detail::completion_executors on(asio::io_context& io) {
  return {io.get_executor(), io.get_executor()};
}

}  // namespace

TEST(WaiterList, CompletesOnlyMatchingWaitersAndNeverInline) {
  asio::io_context io;
  waiter_list<int, int> list(on(io));
  recorder low, high;
  list.add(1, record_into{&low});
  list.add(5, record_into{&high});
  list.complete_if([](int key) -> std::optional<std::tuple<error_code, int>> {
    if (key < 3) return std::tuple<error_code, int>{error_code{}, key * 10};
    return std::nullopt;
  });
  EXPECT_EQ(low.calls, 0) << "completion must be posted, not run inline";
  io.poll();  // `high` still pending: outstanding work, so run() would not return
  EXPECT_EQ(low.calls, 1);
  EXPECT_EQ(low.value, 10);
  EXPECT_EQ(high.calls, 0);
  EXPECT_EQ(list.size(), 1u);
}

TEST(WaiterList, ManyWaitersAllComplete) {
  asio::io_context io;
  waiter_list<int, int> list(on(io));
  std::vector<recorder> records(50);
  for (auto& r : records) list.add(0, record_into{&r});
  list.complete_all({error_code{}, 7});
  io.run();
  for (const auto& r : records) {
    EXPECT_EQ(r.calls, 1);
    EXPECT_EQ(r.value, 7);
  }
}

TEST(WaiterList, CancellationCompletesOnlyThatWaiterWithOperationAborted) {
  asio::io_context io;
  waiter_list<int, int> list(on(io));
  asio::cancellation_signal signal;
  recorder cancelled, kept;
  list.add(0, asio::bind_cancellation_slot(signal.slot(), record_into{&cancelled}));
  list.add(0, record_into{&kept});
  signal.emit(asio::cancellation_type::terminal);
  io.poll();  // `kept` still pending
  io.restart();
  EXPECT_EQ(cancelled.calls, 1);
  EXPECT_EQ(cancelled.ec, asio::error::operation_aborted);
  EXPECT_EQ(kept.calls, 0);
  EXPECT_EQ(list.size(), 1u);

  // A second emission after completion must not complete it twice.
  signal.emit(asio::cancellation_type::terminal);
  list.complete_all({error_code{}, 1});
  io.run();
  EXPECT_EQ(cancelled.calls, 1);
  EXPECT_EQ(kept.calls, 1);
}

TEST(WaiterList, DestructionCompletesPendingWaitersWithStopped) {
  asio::io_context io;
  recorder r;
  {
    waiter_list<int, int> list(on(io));
    list.add(0, record_into{&r});
  }
  io.run();
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.ec, s3lect::errc::stopped);
}

TEST(WaiterList, APendingWaiterIsOutstandingWorkOnItsHandlersExecutor) {
  asio::io_context elector_io;
  asio::io_context app;
  waiter_list<int, int> list(on(elector_io));
  recorder r;
  list.add(0, asio::bind_executor(app, record_into{&r}));
  // An io_context with no outstanding work stops as soon as it is polled.
  app.poll();
  EXPECT_FALSE(app.stopped()) << "a pending wait must keep its executor's run() from returning";
  list.complete_all({error_code{}, 3});
  elector_io.run();
  EXPECT_EQ(r.calls, 0) << "the handler ran on the elector's io_context, not on its own";
  app.run();  // Returns once the completion ran and released the work.
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.value, 3);
}

TEST(WaiterList, ACancelledWaiterReleasesItsWork) {
  asio::io_context elector_io;
  asio::io_context app;
  waiter_list<int, int> list(on(elector_io));
  asio::cancellation_signal signal;
  recorder r;
  list.add(0,
           asio::bind_executor(app, asio::bind_cancellation_slot(signal.slot(), record_into{&r})));
  signal.emit(asio::cancellation_type::terminal);
  elector_io.run();
  app.run();  // Would block for ever if the cancelled waiter kept its work.
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.ec, asio::error::operation_aborted);
  EXPECT_EQ(list.size(), 0u);
}

TEST(WaiterList, HandlersWithoutAnExecutorRunOnTheDefaultOneNotOnTheHop) {
  asio::io_context hop;
  asio::io_context application;
  waiter_list<int, int> list({hop.get_executor(), application.get_executor()});
  recorder r;
  list.add(0, record_into{&r});
  list.complete_all({error_code{}, 4});
  hop.run();
  EXPECT_EQ(r.calls, 0) << "ran on the hop executor (the elector's strand)";
  application.run();
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.value, 4);
}

TEST(WaiterList, AListForTerminalCancellationIgnoresPartialAndTotal) {
  asio::io_context io;
  waiter_list<int, int> list(on(io), asio::cancellation_type::terminal);
  asio::cancellation_signal signal;
  recorder r;
  list.add(0, asio::bind_cancellation_slot(signal.slot(), record_into{&r}));
  signal.emit(asio::cancellation_type::partial);
  signal.emit(asio::cancellation_type::total);
  io.poll();
  EXPECT_EQ(r.calls, 0) << "partial or total cancellation of an operation that cannot be undone";
  EXPECT_EQ(list.size(), 1u);
  signal.emit(asio::cancellation_type::terminal);
  io.run();
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.ec, asio::error::operation_aborted);
}
