// `s3lect status --watch`'s core: one line per change of who leads, renewals silent, a record
// not renewed for its lease reported expired, and the text and JSON lines.
#include "cli/leadership_watch.hpp"

#include <gtest/gtest.h>

namespace s3lect::cli {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

lock_observation record_of(const std::string& etag, const std::string& leader, std::uint64_t term,
                           bool released = false,
                           std::optional<std::chrono::milliseconds> lease = 2s) {
  lock_record record;
  record.leader_id = leader;
  record.term = term;
  record.released = released;
  record.lease = lease;
  return {true, etag, record, std::nullopt};
}

std::string state_of(const std::optional<leadership_state>& change) {
  if (!change) return "(no change)";
  return change->state + " " + change->leader_id + " " + std::to_string(change->term);
}

TEST(LeadershipWatch, ReportsChangesOfWhoLeadsAndNotRenewals) {
  leadership_watch watch;
  const steady::time_point t0{};
  EXPECT_EQ(state_of(watch.observe(t0, {})), "none  0");
  EXPECT_EQ(state_of(watch.observe(t0 + 100ms, {})), "(no change)");
  EXPECT_EQ(state_of(watch.observe(t0 + 200ms, record_of("e1", "a", 1))), "leading a 1");
  EXPECT_EQ(state_of(watch.observe(t0 + 900ms, record_of("e2", "a", 1))), "(no change)")
      << "a renewal changes the ETag, not who leads";
  EXPECT_EQ(state_of(watch.observe(t0 + 1s, record_of("e3", "b", 2))), "leading b 2");
  EXPECT_EQ(state_of(watch.observe(t0 + 1100ms, record_of("e4", "b", 2, true))), "released b 2");
  EXPECT_EQ(state_of(watch.observe(t0 + 1200ms, record_of("e5", "a", 3))), "leading a 3");
  lock_observation unreadable{true, "e6", std::nullopt, std::nullopt};
  EXPECT_EQ(state_of(watch.observe(t0 + 1300ms, unreadable)), "unreadable  0");
}

TEST(LeadershipWatch, ARecordNotRenewedForItsLeaseIsExpired) {
  leadership_watch watch;
  const steady::time_point t0{};
  EXPECT_EQ(state_of(watch.observe(t0, record_of("e1", "a", 1))), "leading a 1");
  EXPECT_EQ(state_of(watch.observe(t0 + 1999ms, record_of("e1", "a", 1))), "(no change)");
  EXPECT_EQ(state_of(watch.observe(t0 + 2s, record_of("e1", "a", 1))), "expired a 1");
  EXPECT_EQ(state_of(watch.observe(t0 + 3s, record_of("e1", "a", 1))), "(no change)");
  EXPECT_EQ(state_of(watch.observe(t0 + 4s, record_of("e2", "b", 2))), "leading b 2");
}

TEST(LeadershipWatch, CountsTheRecordsAgeOnTheStoresClockWhenFirstSeen) {
  leadership_watch watch;
  const steady::time_point t0{};
  lock_observation old = record_of("e1", "a", 1);
  old.store_age = 1500ms;
  EXPECT_EQ(state_of(watch.observe(t0, old)), "leading a 1");
  EXPECT_EQ(state_of(watch.observe(t0 + 500ms, old)), "expired a 1");
}

TEST(LeadershipWatch, GoRecordsWithoutALeaseExpireAfterFifteenSeconds) {
  leadership_watch watch;
  const steady::time_point t0{};
  const lock_observation go_record = record_of("e1", "go-node", 0, false, std::nullopt);
  EXPECT_EQ(state_of(watch.observe(t0, go_record)), "leading go-node 0");
  EXPECT_EQ(state_of(watch.observe(t0 + 14999ms, go_record)), "(no change)");
  EXPECT_EQ(state_of(watch.observe(t0 + 15s, go_record)), "expired go-node 0");
}

TEST(LeadershipWatch, PrintsTextAndJsonLines) {
  const std::chrono::system_clock::time_point at{std::chrono::milliseconds{1795636559123}};
  const leadership_state leading{"leading", "api 7", "10.0.0.5:8443", 42, {}};
  EXPECT_EQ(watch_text_line(leading, change_source::peer, at),
            "time=2026-11-25T19:55:59.123Z source=peer state=leading leader=\"api 7\" term=42 "
            "addr=10.0.0.5:8443");
  EXPECT_EQ(watch_json_line("s3://b/k", leading, change_source::peer, at),
            "{\"time\":\"2026-11-25T19:55:59.123Z\",\"lock\":\"s3://b/k\",\"source\":\"peer\","
            "\"state\":\"leading\",\"leaderID\":\"api 7\",\"leaderAddr\":\"10.0.0.5:8443\","
            "\"term\":42}");
  const leadership_state none{"none", "", "", 0, {}};
  EXPECT_EQ(watch_text_line(none, change_source::s3, at),
            "time=2026-11-25T19:55:59.123Z source=s3 state=none");
  EXPECT_EQ(watch_json_line("s3://b/k", none, change_source::s3, at),
            "{\"time\":\"2026-11-25T19:55:59.123Z\",\"lock\":\"s3://b/k\",\"source\":\"s3\","
            "\"state\":\"none\",\"leaderID\":null,\"leaderAddr\":null,\"term\":null}");
}

TEST(LeadershipWatch, AReleaseNamingASuccessorSaysWho) {
  leadership_watch watch;
  const steady::time_point t0{};
  lock_observation released = record_of("e2", "api-7", 4, true, 15s);
  released.record->successor = "api 8";
  const auto change = watch.observe(t0, released);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->successor, "api 8");
  const std::chrono::system_clock::time_point at{std::chrono::milliseconds{1795636559123}};
  EXPECT_EQ(watch_text_line(*change, change_source::s3, at),
            "time=2026-11-25T19:55:59.123Z source=s3 state=released leader=api-7 term=4 "
            "successor=\"api 8\"");
  EXPECT_NE(watch_json_line("s3://b/k", *change, change_source::s3, at)
                .find("\"term\":4,\"successor\":\"api 8\"}"),
            std::string::npos);
  lock_observation unnamed = record_of("e3", "api-7", 4, true, 15s);
  const auto plain = watch.observe(t0 + 1ms, unnamed);
  ASSERT_TRUE(plain) << "the same release without the name is a change";
  EXPECT_EQ(watch_text_line(*plain, change_source::s3, at).find("successor"), std::string::npos);
}

}  // namespace
}  // namespace s3lect::cli
