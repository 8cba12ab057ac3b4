// What the fuzz targets of tests/fuzz found, kept as ordinary tests so that they stay fixed
// without clang or libFuzzer. Each test names its target and the invariant that broke.
#include <s3lect/record.hpp>

#include "health_protocol.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <string>

namespace s3lect {
namespace {

using namespace std::chrono;

// record_fuzz, "whatever decodes re-encodes and decodes again": a lastUpdated 0.9995 s into the
// last second a reader accepts decoded, but encode_record rounds it up to the next second, which
// the same reader then refused. (The limit was then a year after the reader's clock; it is now
// the fixed max_record_time, and the rounding rule is the same.)
TEST(fuzz_regressions, record_just_below_the_time_limit_survives_a_round_trip) {
  ASSERT_EQ(max_record_time, sys_days{year{2200} / January / 1});
  const std::string body = R"({"leaderID":"a","lastUpdated":"2199-12-31T23:59:59.9995Z"})";
  const record_decoding first = decode_record(body);
  if (first.record) {
    const record_decoding again = decode_record(encode_record(*first.record));
    EXPECT_TRUE(again.record) << again.message;
  }
  // Decided on the instant as it is written: refused, like "2200-01-01T00:00:00.000Z".
  EXPECT_FALSE(first.record);
  EXPECT_FALSE(
      decode_record(R"({"leaderID":"a","lastUpdated":"2200-01-01T00:00:00.000Z"})").record);
  // The last millisecond before the limit, and a sub-millisecond fraction that rounds up within
  // it, still pass.
  EXPECT_TRUE(decode_record(R"({"leaderID":"a","lastUpdated":"2199-12-31T23:59:59.999Z"})").record);
  const record_decoding within =
      decode_record(R"({"leaderID":"a","lastUpdated":"2199-12-31T23:59:59.9989Z"})");
  ASSERT_TRUE(within.record) << within.message;
  EXPECT_TRUE(decode_record(encode_record(*within.record)).record);
}

// health_request_fuzz, "every answer is a JSON object": a 400 quotes the offending query value
// byte for byte, so a value that is not UTF-8 (or whose first 32 bytes cut a UTF-8 sequence in
// two) yielded a body no JSON parser accepts. Fixed: the quote keeps printable ASCII only.
// health_request_fuzz, "everything the record said is still there": a record that carried its
// own "writeAgeMs" lost it in the 200 body. That is deliberate (a follower counts the lease from
// that age, so only the leader's own measure may go out); the invariant was narrowed, and this
// keeps the behaviour.
TEST(fuzz_regressions, a_records_own_write_age_is_never_passed_on) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = 7;
  snapshot.lease_remaining = milliseconds{14876};
  snapshot.serial = 3;
  snapshot.leader_id = "api-7";
  snapshot.record_json =
      R"({"leaderID":"a)i-7","writeAgeMs":"10.42:8443","lastUpdated":"2025-12-31T23:59:50.123Z",)"
      R"("term":7,"llaseMs":15000,"released":false,"nonce":"4117b6d1590d4b0f"})";
  const boost::json::value without = boost::json::parse(detail::leader_body(snapshot));
  EXPECT_FALSE(without.as_object().contains("writeAgeMs"));
  EXPECT_TRUE(without.as_object().contains("llaseMs")) << "other fields stay";
  snapshot.write_age = milliseconds{12};
  const boost::json::value with = boost::json::parse(detail::leader_body(snapshot));
  EXPECT_EQ(with.at("writeAgeMs").to_number<std::int64_t>(), 12);
}

// health_request_fuzz, "every answer is a JSON object": a record holding 15e615 was read as
// infinity and written back as `Infinity`, which is not JSON. Such a record (never one of ours)
// is now replaced like any record that is not an object.
TEST(fuzz_regressions, a_record_with_a_number_beyond_a_double_still_gives_json) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = 7;
  snapshot.leader_id = "api-7";
  snapshot.record_json = R"({"leaderID":"api-7","term":7,"x":[1,{"y":15e615}]})";
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(detail::leader_body(snapshot), ec);
  ASSERT_FALSE(ec) << detail::leader_body(snapshot);
  EXPECT_EQ(body.at("leaderID").as_string(), "api-7");
  EXPECT_FALSE(body.as_object().contains("x"));
}

TEST(fuzz_regressions, bad_request_body_is_json_whatever_the_query_bytes) {
  const std::string path = "/health/leadership";
  for (const std::string& target : {path + "?watch=30000&term=\xC9\xF8",
                                    path + "?watch=1&term=" + std::string(31, '7') + "\xC3\xA9"}) {
    const detail::routed_request routed = detail::route_request("GET", target, path);
    ASSERT_EQ(routed.type, detail::routed_request::kind::bad_request);
    const auto response = detail::rejection_response(routed);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 400u);
    boost::system::error_code ec;
    const boost::json::value body = boost::json::parse(response->body, ec);
    EXPECT_FALSE(ec) << response->body;
    EXPECT_TRUE(body.is_object()) << response->body;
  }
}

}  // namespace
}  // namespace s3lect
