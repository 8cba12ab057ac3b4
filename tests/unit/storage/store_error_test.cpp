// The default completion token and with_diagnostics: a failed store operation throws (or hands
// a callback) an s3lect::store_error that keeps what the store said; other operations a plain
// system_error; success no exception at all; the adapted handler keeps its executor and
// cancellation slot.
#include <s3lect/completion_token.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/store_error.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using s3lect::errc;
using s3lect::get_result;
using s3lect::memory_faults;
using s3lect::memory_storage;
using s3lect::memory_store;
using s3lect::store_error;

/// What a coroutine awaiting with the default token saw.
struct awaited {
  bool done = false;
  std::optional<get_result> result;
  std::exception_ptr failure;
};

asio::awaitable<void> get_with_default_token(memory_storage& view, awaited& out) {
  try {
    out.result = co_await view.async_get("group/leader.json");
  } catch (...) {
    out.failure = std::current_exception();
  }
  out.done = true;
}

/// An elector that is never started: its operations fail or wait without a store request.
s3lect::elector_config lone_config() {
  s3lect::elector_config config;
  config.lock_key = "group/leader.json";
  config.server_id = "node-a";
  return config;
}

memory_faults failing_with(error_code ec) {
  memory_faults faults;
  faults.fail_next = 1;
  faults.fail_with = ec;
  return faults;
}

TEST(StoreError, TheDefaultTokenThrowsAStoreErrorWithWhatTheStoreSaid) {
  asio::io_context io;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  view.set_faults(failing_with(errc::no_such_bucket));
  awaited out;
  asio::co_spawn(io, get_with_default_token(view, out), asio::detached);
  io.run();
  ASSERT_TRUE(out.done);
  ASSERT_TRUE(out.failure) << "a failed GET must throw";
  try {
    std::rethrow_exception(out.failure);
  } catch (const store_error& e) {
    EXPECT_EQ(e.code(), errc::no_such_bucket);
    EXPECT_EQ(e.info().http_status, 404u);
    EXPECT_EQ(e.info().error_code, "NoSuchBucket");
    EXPECT_NE(std::string(e.what()).find("NoSuchBucket"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    FAIL() << "not a store_error: " << e.what();
  }
}

TEST(StoreError, TheDefaultTokenThrowsNothingOnSuccess) {
  asio::io_context io;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  awaited out;
  asio::co_spawn(io, get_with_default_token(view, out), asio::detached);
  io.run();
  ASSERT_TRUE(out.done);
  EXPECT_FALSE(out.failure);
  ASSERT_TRUE(out.result);
  EXPECT_FALSE(out.result->found) << "a missing key is success without an object";
  EXPECT_EQ(out.result->info.http_status, 404u);
}

TEST(StoreError, WhatNamesTheStoresCodeStatusRequestIdAndMessage) {
  s3lect::response_info info;
  info.http_status = 403;
  info.error_code = "SignatureDoesNotMatch";
  info.message = "The request signature we calculated does not match";
  info.request_id = "tx0001";
  const store_error e(errc::signature_mismatch, info);
  const std::string what = e.what();
  for (const char* part : {"SignatureDoesNotMatch", "403", "tx0001", "does not match"}) {
    EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
  }
  EXPECT_NE(what.find(e.code().message()), std::string::npos) << what;
  EXPECT_EQ(e.info().request_id, "tx0001");
  const boost::system::system_error& base = e;  // caught with every other failure
  EXPECT_EQ(base.code(), errc::signature_mismatch);
}

TEST(StoreError, ACallbackThroughWithDiagnosticsGetsTheExceptionAndTheResult) {
  asio::io_context io;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  view.set_faults(failing_with(errc::access_denied));
  std::exception_ptr failure;
  std::optional<get_result> result;
  int calls = 0;
  view.async_get("k", s3lect::with_diagnostics([&](std::exception_ptr e, get_result r) {
                   ++calls;
                   failure = e;
                   result = std::move(r);
                 }));
  io.run();
  ASSERT_EQ(calls, 1);
  ASSERT_TRUE(failure);
  ASSERT_TRUE(result) << "the result comes with the exception";
  try {
    std::rethrow_exception(failure);
  } catch (const store_error& e) {
    EXPECT_EQ(e.code(), errc::access_denied);
    EXPECT_EQ(e.info().error_code, result->info.error_code);
  }
}

TEST(StoreError, OperationsWhoseResultSaysNothingOfTheStoreThrowASystemError) {
  asio::io_context io;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  s3lect::elector e(io.get_executor(), view, lone_config());
  std::exception_ptr failure;
  e.async_resign(s3lect::with_diagnostics([&](std::exception_ptr ex) { failure = ex; }));
  io.run();
  ASSERT_TRUE(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const store_error&) {
    FAIL() << "a resignation is no store operation";
  } catch (const boost::system::system_error& ex) {
    EXPECT_EQ(ex.code(), errc::not_leader);
  }
}

TEST(StoreError, TheAdaptedHandlerKeepsItsExecutorAndCancellationSlot) {
  asio::io_context io;
  asio::io_context app;
  memory_storage view(io.get_executor(), std::make_shared<memory_store>());
  s3lect::elector e(io.get_executor(), view, lone_config());
  asio::cancellation_signal signal;
  std::exception_ptr failure;
  bool ran_on_app = false;
  e.async_wait_for_leadership(s3lect::with_diagnostics(asio::bind_executor(
      app, asio::bind_cancellation_slot(signal.slot(),
                                        [&](std::exception_ptr ex, s3lect::leadership_lease) {
                                          failure = ex;
                                          ran_on_app = app.get_executor().running_in_this_thread();
                                        }))));
  signal.emit(asio::cancellation_type::terminal);
  io.run();
  app.run();
  EXPECT_TRUE(ran_on_app) << "the bound executor was lost in the adapter";
  ASSERT_TRUE(failure) << "the cancellation slot was lost in the adapter";
  try {
    std::rethrow_exception(failure);
  } catch (const boost::system::system_error& ex) {
    EXPECT_EQ(ex.code(), asio::error::operation_aborted);
  }
}

}  // namespace
