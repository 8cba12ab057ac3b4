// elector::async_run: the election awaited to its end. It ends with success at a stop, with the
// store's refusal when the store will not serve this elector (three refused reads or writes in
// a row), with errc::stopped at destruction; transient failures and a single refusal never end
// it. On the manual clock (tests/support/elector_group.hpp): the store is in memory.
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>

#include "support/elector_group.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using s3lect::elector;
using s3lect::elector_config;
using s3lect::memory_faults;

namespace {

elector_config run_config(std::string id) {
  elector_config config;
  config.lock_key = "group/leader.json";
  config.server_id = std::move(id);
  config.server_address = "127.0.0.1:1";
  s3lect::test::use_short_timing(config);
  return config;
}

/// One elector on the manual clock, and what its async_run completed with.
struct run_fixture : s3lect::test::elector_group {
  run_fixture() : elector_group(1, [](int) { return run_config("node-0"); }) {}

  elector& e() { return *electors[0]; }
  s3lect::memory_storage& view() { return *views[0]; }

  /// Faults that answer every request with `ec`, without reaching the store.
  void fail_every_request_with(error_code ec) {
    memory_faults faults;
    faults.fail_next = 1'000'000;
    faults.fail_with = ec;
    view().set_faults(faults);
  }

  /// Starts async_run; its completion lands in `ran`.
  void run() {
    e().async_run([this](error_code ec) { ran = ec; });
  }

  std::optional<error_code> ran;
};

/// A storage whose reads reach a memory store and whose writes are all refused with `refusal`:
/// credentials that may read the bucket and not write it.
class read_only_storage final : public s3lect::storage {
 public:
  read_only_storage(asio::any_io_executor executor, std::shared_ptr<s3lect::memory_store> store,
                    error_code refusal)
      : inner_(std::move(executor), std::move(store)), refusal_(refusal) {}

  executor_type get_executor() const override { return inner_.get_executor(); }
  bool answers_authenticated() const noexcept override { return true; }

  int puts = 0;

 protected:
  void get_impl(std::string key,
                asio::any_completion_handler<s3lect::get_signature> handler) override {
    inner_.async_get(std::move(key), std::move(handler));
  }
  void put_impl(std::string, std::string, s3lect::put_condition,
                asio::any_completion_handler<s3lect::put_signature> handler) override {
    refuse(std::move(handler));
  }
  void put_with_metadata_impl(
      std::string, std::string, s3lect::put_condition, s3lect::object_metadata,
      asio::any_completion_handler<s3lect::put_signature> handler) override {
    refuse(std::move(handler));
  }

 private:
  struct refused {
    asio::any_completion_handler<s3lect::put_signature> handler;
    error_code refusal;
    void operator()() { std::move(handler)(refusal, s3lect::put_result{}); }
  };
  void refuse(asio::any_completion_handler<s3lect::put_signature> handler) {
    ++puts;
    asio::post(inner_.get_executor(), refused{std::move(handler), refusal_});
  }

  s3lect::memory_storage inner_;
  error_code refusal_;
};

}  // namespace

TEST(ElectorRun, AWrongSecretKeyEndsTheRunAfterThreeRefusedReadsWithTheRefusal) {
  run_fixture f;
  f.fail_every_request_with(s3lect::errc::signature_mismatch);
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }, 10s));
  EXPECT_EQ(*f.ran, s3lect::errc::signature_mismatch);
  // Three reads, not one: a single refusal (a key being rotated) does not end the run.
  EXPECT_EQ(f.view().stats().gets, 3u);
  const auto status = f.e().status();
  EXPECT_FALSE(status.running);
  EXPECT_EQ(status.last_error_code, s3lect::errc::signature_mismatch);
  EXPECT_FALSE(status.last_error.empty());
}

TEST(ElectorRun, EveryRefusalNoRetryChangesEndsTheRun) {
  for (const auto refusal : {s3lect::errc::invalid_access_key, s3lect::errc::access_denied,
                             s3lect::errc::no_such_bucket, s3lect::errc::bad_request}) {
    run_fixture f;
    f.fail_every_request_with(refusal);
    f.run();
    ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }, 10s))
        << make_error_code(refusal).message();
    EXPECT_EQ(*f.ran, refusal);
  }
}

TEST(ElectorRun, TransientFailuresAndWrongClocksNeverEndTheRun) {
  for (const auto failure : {s3lect::errc::server_error, s3lect::errc::timeout,
                             s3lect::errc::connect_failed, s3lect::errc::clock_skewed}) {
    run_fixture f;
    f.fail_every_request_with(failure);
    f.run();
    f.run_for(30s);
    EXPECT_FALSE(f.ran.has_value()) << make_error_code(failure).message();
    EXPECT_TRUE(f.e().status().running);
    EXPECT_GT(f.e().status().consecutive_failures, 10u);
    EXPECT_EQ(f.e().status().last_error_code, failure);
  }
}

TEST(ElectorRun, TwoRefusalsThenAnAnswerDoNotEndTheRun) {
  run_fixture f;
  memory_faults faults;
  faults.fail_next = 2;
  faults.fail_with = s3lect::errc::signature_mismatch;
  f.view().set_faults(faults);
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.e().is_leader(); }, 10s));
  f.run_for(5s);
  EXPECT_FALSE(f.ran.has_value());
  EXPECT_TRUE(f.e().is_leader());
  // The error of the refusals stays for diagnostics; the count of failures says it is over.
  EXPECT_EQ(f.e().status().last_error_code, s3lect::errc::signature_mismatch);
  EXPECT_EQ(f.e().status().consecutive_failures, 0u);
}

TEST(ElectorRun, RefusedWritesEndTheRunThoughReadsSucceed) {
  s3lect::test::elector_io io;
  auto store = std::make_shared<s3lect::memory_store>();
  read_only_storage view(io.io.get_executor(), store, s3lect::errc::access_denied);
  elector e(io.io.get_executor(), view, run_config("node-0"));
  std::optional<error_code> ran;
  e.async_run([&](error_code ec) { ran = ec; });
  ASSERT_TRUE(io.run_until([&] { return ran.has_value(); }, 20s));
  EXPECT_EQ(*ran, s3lect::errc::access_denied);
  EXPECT_EQ(view.puts, 3);
  EXPECT_FALSE(e.is_leader());
}

TEST(ElectorRun, WithStartAloneARefusedElectorKeepsTrying) {
  run_fixture f;
  f.fail_every_request_with(s3lect::errc::signature_mismatch);
  f.e().start();
  f.run_for(10s);
  EXPECT_TRUE(f.e().status().running);
  EXPECT_GT(f.view().stats().gets, 10u);
  EXPECT_EQ(f.e().status().last_error_code, s3lect::errc::signature_mismatch);
}

TEST(ElectorRun, AStopEndsTheRunWithSuccessAfterTheRelease) {
  run_fixture f;
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.e().is_leader(); }));
  std::optional<error_code> stopped;
  f.e().async_stop([&](error_code ec) { stopped = ec; });
  ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }));
  EXPECT_FALSE(*f.ran) << f.ran->message();
  EXPECT_FALSE(f.e().status().running);
  const auto record = f.record();
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->released) << "released before the run completed";
  ASSERT_TRUE(f.run_until([&] { return stopped.has_value(); }));
}

TEST(ElectorRun, DestroyingTheElectorEndsTheRunWithStopped) {
  run_fixture f;
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.e().is_leader(); }));
  f.electors[0].reset();
  ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }));
  EXPECT_EQ(*f.ran, s3lect::errc::stopped);
}

TEST(ElectorRun, ACancelledRunCompletesAbortedAndTheElectorRunsOn) {
  run_fixture f;
  asio::cancellation_signal cancel;
  f.e().async_run(asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec) { f.ran = ec; }));
  ASSERT_TRUE(f.run_until([&] { return f.e().is_leader(); }));
  cancel.emit(asio::cancellation_type::terminal);
  ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }));
  EXPECT_EQ(*f.ran, asio::error::operation_aborted);
  f.run_for(3s);
  EXPECT_TRUE(f.e().is_leader());
  EXPECT_TRUE(f.e().status().running);
}

TEST(ElectorRun, AfterARefusalTheElectorRunsAgainWithTheCountStartedAfresh) {
  run_fixture f;
  f.fail_every_request_with(s3lect::errc::signature_mismatch);
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.ran.has_value(); }, 10s));
  // The operator fixed the key: one more refusal must not end the next run at once.
  memory_faults faults;
  faults.fail_next = 1;
  faults.fail_with = s3lect::errc::signature_mismatch;
  f.view().set_faults(faults);
  f.ran.reset();
  f.run();
  ASSERT_TRUE(f.run_until([&] { return f.e().is_leader(); }, 10s));
  EXPECT_FALSE(f.ran.has_value());
}

TEST(ElectorRun, EveryPendingRunCompletesWithTheRefusal) {
  run_fixture f;
  f.fail_every_request_with(s3lect::errc::no_such_bucket);
  std::optional<error_code> second;
  f.run();
  f.e().async_run([&](error_code ec) { second = ec; });
  ASSERT_TRUE(f.run_until([&] { return f.ran && second; }, 10s));
  EXPECT_EQ(*f.ran, s3lect::errc::no_such_bucket);
  EXPECT_EQ(*second, s3lect::errc::no_such_bucket);
}
