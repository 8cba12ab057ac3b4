// The lock record: the JSON we write, the Go and C++ records we read, and every way a record can
// be wrong (each must be refused with a message, never crash).
#include <s3lect/record.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>
#include <string>

namespace s3lect {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

system_clock::time_point at(int y, unsigned mo, unsigned d, hours h, minutes mi, seconds s,
                            nanoseconds fraction = 0ns) {
  return sys_days{year{y} / month{mo} / day{d}} + h + mi + s +
         duration_cast<system_clock::duration>(fraction);
}

lock_record decoded(std::string_view body) {
  const record_decoding result = decode_record(body);
  EXPECT_TRUE(result.record.has_value()) << body << " -> " << result.message;
  EXPECT_FALSE(result.error);
  return result.record.value_or(lock_record{});
}

// Expects `body` to be refused with a message starting with `field`.
void expect_refused(std::string_view body, std::string_view field) {
  const record_decoding result = decode_record(body);
  EXPECT_FALSE(result.record.has_value()) << body;
  EXPECT_EQ(result.error, make_error_code(errc::malformed_record)) << body;
  EXPECT_EQ(result.message.substr(0, field.size()), field) << body << " -> " << result.message;
}

lock_record example() {
  lock_record r;
  r.leader_id = "api-7";
  r.leader_addr = "10.0.1.42:8443";
  r.last_updated = at(2026, 11, 21, 10h, 30min, 45s, 123ms);
  r.term = 42;
  r.lease = 15000ms;
  r.nonce = "9f1c2a7e5b3d4c11";
  return r;
}

// ---------------------------------------------------------------------------------------------
// Writing

TEST(RecordEncode, IsTheDesignsJson) {
  EXPECT_EQ(encode_record(example()),
            R"({"leaderID":"api-7","leaderAddr":"10.0.1.42:8443",)"
            R"("lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,)"
            R"("released":false,"nonce":"9f1c2a7e5b3d4c11"})");
}

TEST(RecordEncode, RoundsTimestampsUpToTheMillisecond) {
  lock_record r = example();
  // One step of the clock past the millisecond (1 ns in libstdc++, 1 us in libc++).
  r.last_updated = at(2026, 11, 21, 23h, 59min, 59s, 999ms) + system_clock::duration{1};
  EXPECT_NE(encode_record(r).find(R"("lastUpdated":"2026-11-22T00:00:00.000Z")"), std::string::npos)
      << encode_record(r);
  r.last_updated = at(2026, 11, 21, 10h, 0min, 0s, 7ms);
  EXPECT_NE(encode_record(r).find("10:00:00.007Z"), std::string::npos);
}

TEST(RecordEncode, RoundTrips) {
  EXPECT_EQ(decoded(encode_record(example())), example());
  lock_record no_lease = example();
  no_lease.lease.reset();
  EXPECT_EQ(decoded(encode_record(no_lease)), no_lease);
}

TEST(RecordEncode, EscapesTextFields) {
  lock_record r = example();
  r.leader_id = "quote\" backslash\\ newline\n tab\t unicode é €";
  EXPECT_EQ(decoded(encode_record(r)).leader_id, r.leader_id);
}

TEST(RecordEncode, ReleasedRecordCarriesGoZeroTime) {
  lock_record r = example();
  r.released = true;
  const std::string body = encode_record(r);
  EXPECT_NE(body.find(R"("lastUpdated":"0001-01-01T00:00:00Z")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("released":true)"), std::string::npos);
  const lock_record back = decoded(body);
  EXPECT_TRUE(back.released);
  EXPECT_EQ(back.term, 42u);
  EXPECT_EQ(back.leader_id, "api-7");
}

TEST(RecordEncode, PeerKeyPinOnlyWhenSetSoCaModeRecordsStayAsTheyWere) {
  EXPECT_EQ(encode_record(example()).find("peerKeyPin"), std::string::npos);
  lock_record pinned = example();
  pinned.key_pin = "sha256:" + std::string(64, 'a');
  const std::string body = encode_record(pinned);
  EXPECT_NE(body.find(R"("peerKeyPin":"sha256:aaaa)"), std::string::npos) << body;
  EXPECT_EQ(decoded(body), pinned);
}

TEST(RecordDecode, RecordsWithoutAPinHaveAnEmptyOne) {
  // Records of Go writers, of earlier s3lect versions and of CA-mode leaders.
  EXPECT_EQ(decoded(encode_record(example())).key_pin, "");
  EXPECT_EQ(decoded(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z"})").key_pin, "");
}

TEST(RecordDecode, PinNextToUnknownFieldsIsRead) {
  const lock_record r = decoded(
      R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","peerKeyPin":"sha256:0f","later":[1]})");
  EXPECT_EQ(r.key_pin, "sha256:0f");
}

// ---------------------------------------------------------------------------------------------
// Reading Go records

TEST(RecordDecodeGo, ReadmeExample) {
  const lock_record r = decoded(
      R"({"leaderID":"server-001","leaderAddr":"10.0.1.42:8443","lastUpdated":"2024-10-27T10:30:45Z"})");
  EXPECT_EQ(r.leader_id, "server-001");
  EXPECT_EQ(r.leader_addr, "10.0.1.42:8443");
  EXPECT_EQ(r.last_updated, at(2024, 10, 27, 10h, 30min, 45s));
  EXPECT_EQ(r.term, 0u) << "records without term count as term 0";
  EXPECT_FALSE(r.lease);
  EXPECT_FALSE(r.released);
  EXPECT_EQ(r.nonce, "");
}

TEST(RecordDecodeGo, NanosecondTimestamps) {
  const lock_record r =
      decoded(R"({"leaderID":"g","lastUpdated":"2024-10-27T10:30:45.123456789Z"})");
  EXPECT_EQ(r.last_updated, at(2024, 10, 27, 10h, 30min, 45s, 123456789ns));
}

TEST(RecordDecodeGo, AnyUtcOffset) {
  const auto expected = at(2024, 10, 27, 10h, 30min, 45s, 500ms);
  EXPECT_EQ(decoded(R"({"leaderID":"g","lastUpdated":"2024-10-27T12:30:45.5+02:00"})").last_updated,
            expected);
  EXPECT_EQ(decoded(R"({"leaderID":"g","lastUpdated":"2024-10-27T05:00:45.5-05:30"})").last_updated,
            expected);
  EXPECT_EQ(decoded(R"({"leaderID":"g","lastUpdated":"2024-10-27t10:30:45.5z"})").last_updated,
            expected);
}

TEST(RecordDecodeGo, ZeroTimeMeansReleased) {
  EXPECT_TRUE(decoded(R"({"lastUpdated":"0001-01-01T00:00:00Z"})").released);
  EXPECT_TRUE(decoded(R"({"leaderID":"g","lastUpdated":"0001-01-01T00:00:00Z"})").released);
  EXPECT_TRUE(decoded(R"({"lastUpdated":"0001-01-01T01:00:00+01:00"})").released);
  EXPECT_TRUE(decoded(R"({"lastUpdated":"0001-01-01T00:00:00Z","released":false})").released)
      << "Go's zero time wins";
}

TEST(RecordDecode, IgnoresUnknownFields) {
  const lock_record r = decoded(
      R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","future":{"x":[1,2,{"y":null}]},"z":1.5})");
  EXPECT_EQ(r.leader_id, "a");
}

TEST(RecordDecode, DuplicateKeysLastOneCountsLikeGo) {
  EXPECT_EQ(
      decoded(R"({"leaderID":"a","leaderID":"b","lastUpdated":"2026-01-01T00:00:00Z"})").leader_id,
      "b");
}

TEST(RecordDecode, ReleasedRecordNeedsNoLeader) {
  const lock_record r =
      decoded(R"({"lastUpdated":"2026-01-01T00:00:00Z","released":true,"term":9})");
  EXPECT_TRUE(r.released);
  EXPECT_EQ(r.term, 9u);
}

// ---------------------------------------------------------------------------------------------
// Refusing

TEST(RecordDecode, RefusesWrongTypes) {
  expect_refused(R"({"leaderID":5,"lastUpdated":"2026-01-01T00:00:00Z"})", "leaderID:");
  expect_refused(R"({"leaderID":"a","leaderAddr":null,"lastUpdated":"2026-01-01T00:00:00Z"})",
                 "leaderAddr:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","nonce":7})", "nonce:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":"42"})", "term:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":42.0})", "term:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":1e3})", "term:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":-1})", "term:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","leaseMs":"15000"})",
                 "leaseMs:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","released":"yes"})",
                 "released:");
  expect_refused(R"({"leaderID":"a","lastUpdated":1700000000})", "lastUpdated:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","peerKeyPin":1})",
                 "peerKeyPin:");
}

TEST(RecordDecode, RefusesAbsurdTerms) {
  EXPECT_EQ(
      decoded(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":9007199254740992})")
          .term,
      max_record_term);
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":9007199254740993})",
                 "term:");
  expect_refused(
      R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":18446744073709551615})",
      "term:");
  expect_refused(
      R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","term":18446744073709551616})",
      "term:");
}

TEST(RecordDecode, RefusesAbsurdLeases) {
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","leaseMs":0})",
                 "leaseMs:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","leaseMs":86400001})",
                 "leaseMs:");
  EXPECT_EQ(
      decoded(R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","leaseMs":86400000})").lease,
      std::optional<milliseconds>(24h));
}

TEST(RecordDecode, RefusesMissingLeader) {
  expect_refused(R"({"lastUpdated":"2026-01-01T00:00:00Z"})", "leaderID:");
  expect_refused(R"({"leaderID":"","lastUpdated":"2026-01-01T00:00:00Z"})", "leaderID:");
  expect_refused(R"({"leaderID":"a"})", "lastUpdated:");
}

TEST(RecordDecode, RefusesNonJsonAndNonObjects) {
  for (std::string_view body : {"", " ", "null", "[]", "42", R"("text")", "{", R"({"a":1}x)",
                                "{'leaderID':'a'}", "\xff\xfe{}", "{\"leaderID\":\"\xc3\x28\"}"}) {
    expect_refused(body, "record:");
  }
}

TEST(RecordDecode, RefusesDeepNestingWithoutRecursionTrouble) {
  std::string body = R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","x":)";
  body += std::string(100'000, '[');
  expect_refused(body, "record:");
}

TEST(RecordDecode, RefusesOversizedBodies) {
  const std::string head = R"({"leaderID":"a","lastUpdated":"2026-01-01T00:00:00Z","pad":")";
  const std::string tail = R"("})";
  std::string body = head + std::string(max_record_bytes - head.size() - tail.size(), 'x') + tail;
  ASSERT_EQ(body.size(), max_record_bytes);
  EXPECT_TRUE(decode_record(body).record) << "64 KiB exactly is fine";
  body.insert(head.size(), "x");
  expect_refused(body, "record:");
}

TEST(RecordDecode, ReadsAWriterWhoseClockIsYearsAheadAndRefusesOnlyUnrepresentableTimes) {
  // A writer's clock years ahead (a Go node with a broken clock) still wrote a readable record:
  // its term and lease must count, whatever the reader's own clock says (no decision reads
  // lastUpdated). Only what system_clock cannot hold is refused.
  const record_decoding ahead = decode_record(
      R"({"leaderID":"a","lastUpdated":"2031-11-23T00:00:00Z","term":9,"leaseMs":20000})");
  ASSERT_TRUE(ahead.record) << ahead.message;
  EXPECT_EQ(ahead.record->term, 9u);
  EXPECT_EQ(ahead.record->lease, std::chrono::milliseconds{20000});
  EXPECT_TRUE(decode_record(R"({"leaderID":"a","lastUpdated":"2199-12-31T23:59:59Z"})").record);
  expect_refused(R"({"leaderID":"a","lastUpdated":"2200-01-01T00:00:00Z"})", "lastUpdated:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"9999-12-31T23:59:59Z"})", "lastUpdated:");
}

TEST(RecordDecode, RefusesTimestampsBefore1970ExceptGoZero) {
  EXPECT_TRUE(decode_record(R"({"leaderID":"a","lastUpdated":"1970-01-01T00:00:00Z"})").record);
  expect_refused(R"({"leaderID":"a","lastUpdated":"1969-12-31T23:59:59Z"})", "lastUpdated:");
  expect_refused(R"({"leaderID":"a","lastUpdated":"0001-01-01T00:00:01Z"})", "lastUpdated:");
}

TEST(RecordDecode, RefusesMalformedTimestamps) {
  for (std::string_view stamp :
       {"2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-10T00:00:00Z",
        "2024-04-31T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z",
        "2024-01-01T23:59:60Z", "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+02:60",
        "2024-01-01T00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00ZZ", "2024-1-01T00:00:00Z", "+2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00+0200", "yesterday", ""}) {
    expect_refused(R"({"leaderID":"a","lastUpdated":")" + std::string(stamp) + R"("})",
                   "lastUpdated:");
  }
  EXPECT_TRUE(decode_record(R"({"leaderID":"a","lastUpdated":"2024-02-29T00:00:00Z"})").record);
}

TEST(RecordDecode, NeverCrashesOnMutatedRecords) {
  std::mt19937 rng(7);
  const std::string valid = encode_record(example());
  int accepted = 0;
  for (int i = 0; i < 20'000; ++i) {
    std::string body = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const std::size_t pos = rng() % body.size();
      switch (rng() % 4) {
        case 0:
          body[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          body.insert(pos, 1, static_cast<char>(rng() % 256));
          break;
        default:
          body.resize(pos);
          break;
      }
    }
    const record_decoding result = decode_record(body);
    if (result.record) {
      ++accepted;
      EXPECT_TRUE(result.message.empty());
    } else {
      EXPECT_FALSE(result.message.empty());
      EXPECT_EQ(result.error, make_error_code(errc::malformed_record));
    }
  }
  EXPECT_GT(accepted, 0) << "some mutations only touch the nonce or the id";
}

// ---------------------------------------------------------------------------------------------
// Nonces

TEST(RecordNonce, SixteenLowercaseHexDigitsAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10'000; ++i) {
    const std::string nonce = make_nonce();
    ASSERT_EQ(nonce.size(), 16u);
    EXPECT_EQ(nonce.find_first_not_of("0123456789abcdef"), std::string::npos) << nonce;
    EXPECT_TRUE(seen.insert(nonce).second) << "repeated nonce " << nonce;
  }
}

}  // namespace
}  // namespace s3lect
