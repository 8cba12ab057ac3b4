// `s3lect status` output and the record `s3lect release` writes.
#include "cli/status.hpp"
#include "cli/release.hpp"

#include <s3lect/storage.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using s3lect::lock_record;
using s3lect::cli::forced_release_record;
using s3lect::cli::guardian_release_record;
using s3lect::cli::malformed_status_json;
using s3lect::cli::released_record;
using s3lect::cli::status_json;

namespace {

const std::chrono::system_clock::time_point written =
    std::chrono::sys_days{std::chrono::year{2026} / 11 / 21} + 10h + 30min + 45s + 123ms;

lock_record held_record() {
  lock_record record;
  record.leader_id = "api-7";
  record.leader_addr = "10.0.1.42:8443";
  record.last_updated = written;
  record.term = 42;
  record.lease = 15s;
  record.nonce = "9f1c2a7e5b3d4c11";
  return record;
}

TEST(StatusJson, PrintsTheRecordAndItsAgeByTheLocalClock) {
  EXPECT_EQ(status_json("s3://b/k", "abc", held_record(), written + 1234ms),
            "{\"lock\":\"s3://b/k\",\"etag\":\"abc\",\"leaderID\":\"api-7\",\"leaderAddr\":"
            "\"10.0.1.42:8443\",\"lastUpdated\":\"2026-11-21T10:30:45.123Z\",\"term\":42,"
            "\"leaseMs\":15000,\"released\":false,\"nonce\":\"9f1c2a7e5b3d4c11\",\"ageMs\":1234,"
            "\"expired\":false,\"storeAgeMs\":null,\"clockOffsetMs\":null,"
            "\"clockOffsetBoundMs\":null}");
}

TEST(StatusJson, JudgesExpiryOnTheStoresClockWhenTheStoreDatesIt) {
  // This machine's clock is 5 minutes ahead: by lastUpdated the record looks long expired, but
  // the store wrote it 3 s ago.
  s3lect::cli::store_timing store;
  store.store_age = 3000ms;
  store.clock_offset = -300'000ms;
  store.clock_offset_bound = 502ms;
  const std::string json =
      status_json("s3://b/k", "abc", held_record(), written + 5min + 3s, store);
  EXPECT_NE(json.find("\"ageMs\":303000,\"expired\":false,\"storeAgeMs\":3000,"
                      "\"clockOffsetMs\":-300000,\"clockOffsetBoundMs\":502}"),
            std::string::npos)
      << json;
  store.store_age = 15000ms;
  EXPECT_NE(status_json("s3://b/k", "abc", held_record(), written, store).find("\"expired\":true"),
            std::string::npos);
}

TEST(ClockOffsetOf, OneAnswerGivesTheOffsetWithinHalfASecondAndHalfTheRoundTrip) {
  s3lect::response_info answer;
  EXPECT_FALSE(s3lect::clock_offset_of(answer, written)) << "no Date, no offset";
  // The store's clock is 300.25 s behind ours; the answer took 10 ms.
  answer.server_date = std::chrono::floor<std::chrono::seconds>(written - 300s - 250ms - 5ms);
  answer.round_trip = 10ms;
  const auto offset = s3lect::clock_offset_of(answer, written);
  ASSERT_TRUE(offset);
  // Half a second, half the round trip, and half of a lag a coarse store clock may add.
  EXPECT_LE(offset->error_bound, 511ms);
  EXPECT_GE(offset->error_bound, 510ms);
  EXPECT_LE(std::chrono::abs(offset->offset - -300'250ms), offset->error_bound);
}

TEST(StatusJson, CallsARecordOlderThanItsLeaseExpired) {
  const std::string json = status_json("s3://b/k", "abc", held_record(), written + 15s);
  EXPECT_NE(json.find("\"ageMs\":15000,\"expired\":true"), std::string::npos) << json;
}

TEST(StatusJson, ShowsReleasedRecordsWithGosZeroTime) {
  lock_record record = held_record();
  record.released = true;
  record.last_updated = {};
  const std::string json = status_json("s3://b/k", "abc", record, written);
  EXPECT_NE(json.find("\"lastUpdated\":\"0001-01-01T00:00:00Z\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"released\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ageMs\":null,\"expired\":true"), std::string::npos) << json;
}

TEST(StatusJson, LeavesTheLeaseOfGoRecordsNull) {
  lock_record record = held_record();
  record.lease.reset();
  record.term = 0;
  record.nonce.clear();
  const std::string json = status_json("s3://b/k", "abc", record, written + 20s);
  EXPECT_NE(json.find("\"term\":0,\"leaseMs\":null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"nonce\":\"\",\"ageMs\":20000,\"expired\":null"), std::string::npos)
      << json;
}

TEST(StatusJson, ShowsThePeerKeyPinOnlyWhenTheRecordHasOne) {
  lock_record record = held_record();
  EXPECT_EQ(status_json("s3://b/k", "abc", record, written).find("peerKeyPin"), std::string::npos);
  record.key_pin = "sha256:" + std::string(64, 'a');
  const std::string json = status_json("s3://b/k", "abc", record, written);
  EXPECT_NE(json.find("\"nonce\":\"9f1c2a7e5b3d4c11\",\"peerKeyPin\":\"sha256:" +
                      std::string(64, 'a') + "\",\"ageMs\":0"),
            std::string::npos)
      << json;
}

TEST(StatusJson, EscapesWhatARecordMayHold) {
  lock_record record = held_record();
  record.leader_id = "a\"b\n";
  const std::string json = status_json("s3://b/k", "abc", record, written);
  EXPECT_NE(json.find("\"leaderID\":\"a\\\"b\\n\""), std::string::npos) << json;
}

TEST(StatusJson, ShowsCoordinationFieldsOnlyWhenSet) {
  lock_record record = held_record();
  const std::string plain = status_json("s3://b/k", "abc", record, written);
  for (const char* field : {"priority", "candidates", "successor", "handoverMs", "keepOut"}) {
    EXPECT_EQ(plain.find(field), std::string::npos) << field;
  }
  record.priority = -3;
  record.candidates = {{"api-8", 5}, {"a\"b", 0}};
  record.successor = "api-8";
  record.handover = 10s;
  record.keep_out = "api-7";
  const std::string json = status_json("s3://b/k", "abc", record, written);
  EXPECT_NE(json.find("\"nonce\":\"9f1c2a7e5b3d4c11\",\"priority\":-3,\"candidates\":[{\"id\":"
                      "\"api-8\",\"priority\":5},{\"id\":\"a\\\"b\",\"priority\":0}],"
                      "\"successor\":\"api-8\",\"handoverMs\":10000,\"keepOut\":\"api-7\","
                      "\"ageMs\":0"),
            std::string::npos)
      << json;
}

TEST(MalformedStatusJson, ShowsTheErrorTheSizeAndAPreview) {
  EXPECT_EQ(malformed_status_json("s3://b/k", "e", "malformed lock record: term: bad", "{x"),
            "{\"lock\":\"s3://b/k\",\"etag\":\"e\",\"error\":\"malformed lock record: term: "
            "bad\",\"bodyBytes\":2,\"bodyTruncated\":false,\"preview\":\"{x\"}");
}

// Never the body: 256 bytes of it at most, escaped (a NUL is six characters), whatever its size.
TEST(MalformedStatusJson, APreviewOfAHugeBodyIsBoundedAndEscaped) {
  const std::string nuls(1024 * 1024, '\0');
  const std::string json = malformed_status_json("s3://b/k", "e", "bad", nuls, true);
  EXPECT_LT(json.size(), 256u * 6 + 200) << json.substr(0, 200);
  EXPECT_NE(json.find("\"bodyBytes\":1048576,\"bodyTruncated\":true,\"preview\":\"\\u0000"),
            std::string::npos)
      << json.substr(0, 200);
  EXPECT_EQ(json.find('\0'), std::string::npos);
  // More than the preview shows is said even when the whole object was read.
  const std::string long_text(300, 'x');
  EXPECT_NE(malformed_status_json("s3://b/k", "e", "bad", long_text).find("\"bodyTruncated\":true"),
            std::string::npos);
}

TEST(ReleasedRecord, KeepsHolderAndTermWithAFreshNonce) {
  const lock_record current = held_record();
  const lock_record next = released_record(current, written + 1s);
  EXPECT_TRUE(next.released);
  EXPECT_EQ(next.leader_id, current.leader_id);
  EXPECT_EQ(next.leader_addr, current.leader_addr);
  EXPECT_EQ(next.term, current.term);
  EXPECT_EQ(next.lease, current.lease);
  EXPECT_EQ(next.last_updated, written + 1s);
  EXPECT_NE(next.nonce, current.nonce);
  EXPECT_EQ(next.nonce.size(), 16u);
  EXPECT_NE(released_record(current, written).nonce, next.nonce);
  EXPECT_TRUE(next.successor.empty());
  EXPECT_TRUE(next.keep_out.empty());
  EXPECT_FALSE(next.handover) << "a window names nobody without a successor or keepOut";
}

/// A record that an earlier release named people in, re-acquired by its holder since: the
/// names were copied with the rest by a careless writer and must not survive a new release.
lock_record record_with_stale_names() {
  lock_record record = held_record();
  record.candidates = {{"api-8", 5}, {"api-9", 1}};
  record.priority = 2;
  record.successor = "api-3";
  record.keep_out = "api-4";
  record.handover = 99s;
  record.coordination_note = "handoverMs: ignored";
  return record;
}

TEST(ForcedReleaseRecord, KeepsTheHolderOutAndNamesTheFirstCandidate) {
  const lock_record current = record_with_stale_names();
  const lock_record next = forced_release_record(current, written + 1s, "", std::nullopt);
  EXPECT_TRUE(next.released);
  EXPECT_EQ(next.leader_id, "api-7");
  EXPECT_EQ(next.term, 42u);
  EXPECT_EQ(next.keep_out, "api-7");
  EXPECT_EQ(next.successor, "api-8");
  EXPECT_EQ(next.handover, std::optional<std::chrono::milliseconds>(10s)) << "2/3 of 15s";
  EXPECT_EQ(next.candidates, current.candidates) << "the ranks stay for crash failover";
  EXPECT_EQ(next.priority, current.priority);
  EXPECT_TRUE(next.coordination_note.empty());
  EXPECT_NE(next.nonce, current.nonce);
}

TEST(ForcedReleaseRecord, ToAndKeepOutWin) {
  const lock_record next = forced_release_record(record_with_stale_names(), written, "api-9", 3s);
  EXPECT_EQ(next.successor, "api-9");
  EXPECT_EQ(next.keep_out, "api-7");
  EXPECT_EQ(next.handover, std::optional<std::chrono::milliseconds>(3s));
}

TEST(ForcedReleaseRecord, ClearsStaleNamesWhenThereIsNoCandidate) {
  lock_record current = record_with_stale_names();
  current.candidates.clear();
  current.lease = 6s;
  const lock_record next = forced_release_record(current, written, "", std::nullopt);
  EXPECT_TRUE(next.successor.empty()) << "not the stale api-3";
  EXPECT_EQ(next.keep_out, "api-7") << "not the stale api-4";
  EXPECT_EQ(next.handover, std::optional<std::chrono::milliseconds>(4s)) << "2/3 of 6s";
}

TEST(ForcedReleaseRecord, NeverNamesTheHolderAndDefaultsAGoRecordsLease) {
  lock_record current = held_record();
  current.lease.reset();  // a Go writer's record
  current.candidates = {{"api-7", 9}};
  const lock_record next = forced_release_record(current, written, "", std::nullopt);
  EXPECT_TRUE(next.successor.empty());
  EXPECT_EQ(next.handover, std::optional<std::chrono::milliseconds>(10s)) << "2/3 of Go's 15s";
}

TEST(GuardianReleaseRecord, NamesTheFirstCandidateForAShortWindowAndKeepsNobodyOut) {
  lock_record current = record_with_stale_names();
  const lock_record next = guardian_release_record(current, written + 1s);
  EXPECT_TRUE(next.released);
  EXPECT_EQ(next.successor, "api-8");
  EXPECT_TRUE(next.keep_out.empty()) << "not the stale api-4: the holder is gone";
  EXPECT_EQ(next.handover, std::optional<std::chrono::milliseconds>(1s)) << "15s / 15";
  current.lease = 6s;
  EXPECT_EQ(guardian_release_record(current, written).handover,
            std::optional<std::chrono::milliseconds>(400ms));
  current.lease = 1s;
  EXPECT_EQ(guardian_release_record(current, written).handover,
            std::optional<std::chrono::milliseconds>(100ms))
      << "at least 100ms";
  current.lease = 60s;
  EXPECT_EQ(guardian_release_record(current, written).handover,
            std::optional<std::chrono::milliseconds>(1s))
      << "at most 1s";
  current.candidates.clear();
  const lock_record unnamed = guardian_release_record(current, written);
  EXPECT_TRUE(unnamed.successor.empty()) << "not the stale api-3";
  EXPECT_FALSE(unnamed.handover) << "no window without a name";
}

}  // namespace
