// elector::async_run against the real radosgw: a store that refuses the elector ends the run
// with the store's refusal, within 10 s at the default intervals, and status() keeps the
// store's own words. moto checks no signature and creates no bucket errors here: radosgw only.
#include "support/local_s3.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

using namespace std::chrono_literals;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

/// Runs an elector with the default timing on a client built from `adjust`ed radosgw settings,
/// until its async_run completes or 30 s pass.
struct refused_run {
  explicit refused_run(const std::function<void(s3lect::s3_config&)>& adjust) {
    std::string problem;
    auto s3 = s3lect::test::local_s3::from_environment(problem);
    if (!s3) {
      ADD_FAILURE() << problem;
      return;
    }
    auto config = s3->config(false);
    config.request_timeout = 2s;
    adjust(config);
    client = std::make_unique<s3lect::s3_client>(io.get_executor(), config);
    s3lect::elector_config election;
    election.lock_key = "integration/run-" + s3lect::test::unique_suffix() + "/leader.json";
    election.server_id = "node-a";
    elector = std::make_unique<s3lect::elector>(io.get_executor(), *client, election);
    const auto started = steady::now();
    elector->async_run([this](error_code ec) { ran = ec; });
    while (!ran && steady::now() - started < 30s) io.run_one_for(10ms);
    took = steady::now() - started;
  }

  boost::asio::io_context io;
  std::unique_ptr<s3lect::s3_client> client;
  std::unique_ptr<s3lect::elector> elector;
  std::optional<error_code> ran;
  steady::duration took{};
};

}  // namespace

TEST(ElectorRunOnRadosgw, AWrongSecretKeyEndsTheRunWithinTenSecondsNamingTheRefusal) {
  refused_run run([](s3lect::s3_config& config) { config.creds.secret_access_key += "x"; });
  ASSERT_TRUE(run.ran) << "async_run did not complete in 30 s";
  EXPECT_EQ(*run.ran, s3lect::errc::signature_mismatch) << run.ran->message();
  EXPECT_LT(run.took, 10s);
  const auto status = run.elector->status();
  EXPECT_FALSE(status.running);
  EXPECT_EQ(status.last_error_code, s3lect::errc::signature_mismatch);
  EXPECT_NE(status.last_error.find("SignatureDoesNotMatch"), std::string::npos)
      << status.last_error;
}

TEST(ElectorRunOnRadosgw, AMissingBucketEndsTheRunWithNoSuchBucket) {
  refused_run run([](s3lect::s3_config& config) {
    config.bucket = "s3lect-missing-" + s3lect::test::unique_suffix();
  });
  ASSERT_TRUE(run.ran) << "async_run did not complete in 30 s";
  EXPECT_EQ(*run.ran, s3lect::errc::no_such_bucket) << run.ran->message();
  EXPECT_LT(run.took, 10s);
}
