// The election's small sans-I/O rules beside the core: how long an elector holds off after a
// resignation or failed acquire hooks, and which failed writes may be sent again.
#include "hold_offs.hpp"
#include "write_retry.hpp"

#include <s3lect/error.hpp>

#include <gtest/gtest.h>
#include <boost/asio/error.hpp>

namespace s3lect::test {
namespace {

using namespace std::chrono_literals;
using detail::acquire_hook_backoff;

elector_config intervals(std::chrono::milliseconds frequent, std::chrono::milliseconds infrequent) {
  elector_config config;
  config.frequent_interval = frequent;
  config.infrequent_interval = infrequent;
  return config;
}

TEST(ElectionHoldOffs, ResignHoldsOffForTwoFrequentIntervals) {
  EXPECT_EQ(detail::resign_hold_off(intervals(5s, 30s)), 10s);
  EXPECT_EQ(detail::resign_hold_off(intervals(250ms, 1s)), 500ms);
}

TEST(ElectionHoldOffs, HookBackoffDoublesFromFrequentUpToInfrequent) {
  const elector_config config = intervals(5s, 30s);
  acquire_hook_backoff backoff;
  EXPECT_EQ(backoff.after_failure(config), 5s);
  EXPECT_EQ(backoff.after_failure(config), 10s);
  EXPECT_EQ(backoff.after_failure(config), 20s);
  EXPECT_EQ(backoff.after_failure(config), 30s);
  EXPECT_EQ(backoff.after_failure(config), 30s);
  EXPECT_EQ(backoff.failures(), 5u);
}

TEST(ElectionHoldOffs, HookBackoffStartsAgainAfterASuccess) {
  const elector_config config = intervals(5s, 30s);
  acquire_hook_backoff backoff;
  backoff.after_failure(config);
  backoff.after_failure(config);
  backoff.after_success();
  EXPECT_EQ(backoff.failures(), 0u);
  EXPECT_EQ(backoff.after_failure(config), 5s);
}

TEST(ElectionHoldOffs, HookBackoffFollowsTheConfigurationInForce) {
  acquire_hook_backoff backoff;
  EXPECT_EQ(backoff.after_failure(intervals(5s, 30s)), 5s);
  // A smaller infrequent interval caps the doubling at once.
  EXPECT_EQ(backoff.after_failure(intervals(5s, 7s)), 7s);
  // Equal intervals: no doubling at all.
  EXPECT_EQ(backoff.after_failure(intervals(1s, 1s)), 1s);
}

TEST(ElectionWriteRetry, OnlyWritesThatCertainlyDidNotHappenAreSentAgain) {
  EXPECT_TRUE(detail::write_retryable(errc::resolve_failed));
  EXPECT_TRUE(detail::write_retryable(errc::connect_failed));
  EXPECT_TRUE(detail::write_retryable(errc::tls_handshake_failed));
  EXPECT_TRUE(detail::write_retryable(errc::throttled));  // 429: sent before it is acted on
}

TEST(ElectionWriteRetry, WritesInDoubtOrRefusedAreNotSentAgain) {
  EXPECT_FALSE(detail::write_retryable(errc::outcome_unknown));  // 5xx, 503 SlowDown, timeout
  EXPECT_FALSE(detail::write_retryable(errc::connection_lost));
  EXPECT_FALSE(detail::write_retryable(errc::timeout));
  EXPECT_FALSE(detail::write_retryable(errc::precondition_failed));
  EXPECT_FALSE(detail::write_retryable(errc::conflict));
  EXPECT_FALSE(detail::write_retryable(errc::clock_skewed));
  EXPECT_FALSE(detail::write_retryable(boost::asio::error::operation_aborted));
}

}  // namespace
}  // namespace s3lect::test
