// The lock record's coordination fields (docs/coordination.md): written only when set, read back
// whole, and dropped with a note, never fatal, when ill-typed or out of range.
#include <s3lect/record.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;

lock_record coordinated_release() {
  lock_record record;
  record.term = 7;
  record.lease = 15000ms;
  record.released = true;
  record.nonce = "0123456789abcdef";
  record.priority = -3;
  record.candidates = {{"node-b", 2}, {"node-c", -1}};
  record.successor = "node-b";
  record.handover = 1000ms;
  record.keep_out = "node-a";
  return record;
}

constexpr std::string_view held_prefix =
    R"({"leaderID":"a","leaderAddr":"","lastUpdated":"2026-05-01T12:00:00.000Z","term":9,)"
    R"("released":false,"nonce":"n")";

record_decoding decode_held_with(std::string_view fields) {
  return decode_record(std::string(held_prefix) + "," + std::string(fields) + "}");
}

TEST(RecordCoordination, RoundTrips) {
  const lock_record record = coordinated_release();
  const record_decoding back = decode_record(encode_record(record));
  ASSERT_TRUE(back.record) << back.message;
  EXPECT_EQ(*back.record, record);
  EXPECT_EQ(back.record->coordination_note, "");
}

TEST(RecordCoordination, WritesTheDocumentedNames) {
  const std::string body = encode_record(coordinated_release());
  EXPECT_NE(body.find(R"("priority":-3)"), std::string::npos) << body;
  EXPECT_NE(
      body.find(R"("candidates":[{"id":"node-b","priority":2},{"id":"node-c","priority":-1}])"),
      std::string::npos)
      << body;
  EXPECT_NE(body.find(R"("successor":"node-b")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("handoverMs":1000)"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("keepOut":"node-a")"), std::string::npos) << body;
}

TEST(RecordCoordination, ARecordWithoutThemKeepsItsOldShapeByteForByte) {
  lock_record record;
  record.leader_id = "api-7";
  record.term = 1;
  record.lease = 15000ms;
  record.released = true;
  record.nonce = "d96c2ab29a2d3b27";
  EXPECT_EQ(encode_record(record),
            R"({"leaderID":"api-7","leaderAddr":"","lastUpdated":"0001-01-01T00:00:00Z",)"
            R"("term":1,"leaseMs":15000,"released":true,"nonce":"d96c2ab29a2d3b27"})");
}

TEST(RecordCoordination, IllTypedFieldsAreDroppedWithANoteAndTheRecordStillReads) {
  const record_decoding decoded = decode_held_with(
      R"("priority":"high","candidates":{"id":"b"},"successor":7,"handoverMs":-1,"keepOut":null)");
  ASSERT_TRUE(decoded.record) << decoded.message;
  const lock_record& record = *decoded.record;
  EXPECT_EQ(record.leader_id, "a");
  EXPECT_EQ(record.term, 9u);
  EXPECT_FALSE(record.priority);
  EXPECT_TRUE(record.candidates.empty());
  EXPECT_EQ(record.successor, "");
  EXPECT_FALSE(record.handover);
  EXPECT_EQ(record.keep_out, "");
  EXPECT_EQ(record.coordination_note,
            "ignored ill-typed or out-of-range priority, candidates, successor, keepOut, "
            "handoverMs");
}

TEST(RecordCoordination, OutOfRangeValuesAreDropped) {
  EXPECT_FALSE(decode_held_with(R"("priority":1000001)").record->priority);
  EXPECT_EQ(decode_held_with(R"("priority":-1000000)").record->priority, -1000000);
  EXPECT_FALSE(decode_held_with(R"("handoverMs":0)").record->handover);
  EXPECT_FALSE(decode_held_with(R"("handoverMs":86400001)").record->handover);
  EXPECT_EQ(decode_held_with(R"("handoverMs":86400000)").record->handover, 86400000ms);
  EXPECT_FALSE(decode_held_with(R"("handoverMs":1.5)").record->handover);
}

TEST(RecordCoordination, OneBadCandidateDropsTheWholeList) {
  // A partial list would rank the survivors wrongly: a list is all or nothing.
  const auto decoded =
      decode_held_with(R"("candidates":[{"id":"b","priority":1},{"id":"","priority":2}])");
  EXPECT_TRUE(decoded.record->candidates.empty());
  EXPECT_EQ(decoded.record->coordination_note, "ignored ill-typed or out-of-range candidates");
  EXPECT_TRUE(decode_held_with(R"("candidates":[{"id":"b"}])").record->candidates.empty());
  EXPECT_TRUE(decode_held_with(R"("candidates":[{"id":"b","priority":2000000}])")
                  .record->candidates.empty());
}

TEST(RecordCoordination, ListsAreCutToEightCandidates) {
  std::string list = R"("candidates":[)";
  for (int i = 0; i < 12; ++i) {
    list += (i ? "," : "") + std::string(R"({"id":"n)") + std::to_string(i) + R"(","priority":1})";
  }
  const auto decoded = decode_held_with(list + "]");
  ASSERT_EQ(decoded.record->candidates.size(), max_record_candidates);
  EXPECT_EQ(decoded.record->candidates.back().id, "n7");
  EXPECT_EQ(decoded.record->coordination_note, "");
}

}  // namespace
}  // namespace s3lect
