// The election's small sans-I/O rules beside the core: how long an elector holds off after a
// resignation or failed acquire hooks, which failed writes may be sent again, and which landed
// writes count as renewals.
#include "hold_offs.hpp"
#include "renewal_detector.hpp"
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

using detail::boot_clock;
using detail::renewal_detector;

TEST(ElectionRenewals, TheAcquisitionIsNoRenewalTheNextWritesAre) {
  renewal_detector renewals;
  const boot_clock::time_point t0{};
  EXPECT_FALSE(renewals.renewed(std::nullopt, false, 0)) << "nothing written yet";
  EXPECT_FALSE(renewals.renewed(t0, true, 1)) << "the acquisition of period 1";
  EXPECT_FALSE(renewals.renewed(t0, true, 1)) << "no new write since";
  EXPECT_TRUE(renewals.renewed(t0 + 5s, true, 1));
  EXPECT_TRUE(renewals.renewed(t0 + 10s, true, 1));
  EXPECT_FALSE(renewals.renewed(t0 + 10s, true, 1));
}

TEST(ElectionRenewals, WritesBeforeThePeriodIsPublishedAreNoRenewals) {
  renewal_detector renewals;
  const boot_clock::time_point t0{};
  // An on_acquire hook runs: the core leads, the elector has published nothing yet.
  EXPECT_FALSE(renewals.renewed(t0, true, 0));
  EXPECT_FALSE(renewals.renewed(t0 + 5s, true, 0));
  // Published: the first write seen in the period only starts it.
  EXPECT_FALSE(renewals.renewed(t0 + 10s, true, 3));
  EXPECT_TRUE(renewals.renewed(t0 + 15s, true, 3));
}

TEST(ElectionRenewals, AWriteAfterTheLeadershipEndedOrInANewPeriodIsNoRenewal) {
  renewal_detector renewals;
  const boot_clock::time_point t0{};
  renewals.renewed(t0, true, 1);
  EXPECT_FALSE(renewals.renewed(t0 + 5s, false, 1)) << "the core no longer leads";
  renewals.renewed(t0 + 10s, true, 1);
  EXPECT_FALSE(renewals.renewed(t0 + 15s, true, 2)) << "the acquisition of period 2";
  EXPECT_TRUE(renewals.renewed(t0 + 20s, true, 2));
}

}  // namespace
}  // namespace s3lect::test
