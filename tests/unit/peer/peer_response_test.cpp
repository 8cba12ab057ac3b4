// parse_peer_response without I/O: what a follower makes of a leader's health answer, including
// answers no s3lect leader sends (Go leaders, broken or hostile peers).
#include "peer_response.hpp"
#include "health_protocol.hpp"

#include <s3lect/error.hpp>
#include <s3lect/record.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace s3lect::detail {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

constexpr std::size_t cap = 64 * 1024;

const std::string record =
    R"({"leaderID":"node-a","leaderAddr":"10.0.1.42:8443","lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11"})";

peer_parsing parse(unsigned status, std::string_view body, std::string_view watch = {}) {
  return parse_peer_response(status, watch, body, cap);
}

/// A leader body exactly as health_server sends it.
std::string served_leader_body(std::uint64_t term, std::chrono::milliseconds remaining) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = term;
  snapshot.record_json = record;
  snapshot.lease_remaining = remaining;
  snapshot.leader_id = "node-a";
  return leader_body(snapshot);
}

void expect_protocol_error(const peer_parsing& parsing, const std::string& fragment) {
  EXPECT_EQ(parsing.error, errc::protocol_error);
  EXPECT_NE(parsing.answer.message.find(fragment), std::string::npos) << parsing.answer.message;
  EXPECT_FALSE(parsing.answer.leader);
}

// ---------------------------------------------------------------------------------------------
// 200: a leader

TEST(PeerResponse, LeaderAnswerOfAnS3lectServerGivesRecordTermAndLease) {
  const peer_parsing parsing = parse(200, served_leader_body(42, 12s), "changed");
  ASSERT_FALSE(parsing.error) << parsing.answer.message;
  const peer_answer& answer = parsing.answer;
  EXPECT_TRUE(answer.leader);
  EXPECT_EQ(answer.http_status, 200u);
  EXPECT_EQ(answer.term, 42u);
  EXPECT_EQ(answer.lease_remaining, 12s);
  EXPECT_EQ(answer.leader_id, "node-a");
  EXPECT_EQ(answer.record.leader_id, "node-a");
  EXPECT_EQ(answer.record.leader_addr, "10.0.1.42:8443");
  EXPECT_EQ(answer.record.term, 42u);
  EXPECT_EQ(answer.record.lease, 15000ms);
  EXPECT_EQ(answer.record.nonce, "9f1c2a7e5b3d4c11");
  EXPECT_FALSE(answer.record.released);
  EXPECT_EQ(answer.record.last_updated, system_clock::time_point{1795257045123ms});
  EXPECT_EQ(answer.watch, peer_watch_outcome::changed);
  EXPECT_TRUE(answer.message.empty());
  EXPECT_EQ(answer.serial, std::optional<std::uint64_t>(0)) << "leader_body() adds it";
}

TEST(PeerResponse, TheWriteSerialIsReadAndMustBeANonNegativeInteger) {
  const std::string record =
      R"({"leaderID":"a","leaderAddr":"h:1","lastUpdated":"2026-11-21T10:30:45.123Z","term":3,)"
      R"("leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11")";
  const peer_parsing good = parse(200, record + R"(,"serial":17})");
  ASSERT_FALSE(good.error) << good.answer.message;
  EXPECT_EQ(good.answer.serial, std::optional<std::uint64_t>(17));
  const peer_parsing none = parse(200, record + "}");
  ASSERT_FALSE(none.error);
  EXPECT_FALSE(none.answer.serial) << "a Go leader says nothing";
  for (const char* bad : {R"(,"serial":-1})", R"(,"serial":"17"})", R"(,"serial":1.5})"}) {
    const peer_parsing parsing = parse(200, record + bad);
    EXPECT_EQ(parsing.error, s3lect::errc::protocol_error) << bad;
    EXPECT_NE(parsing.answer.message.find("serial"), std::string::npos) << bad;
  }
}

TEST(PeerResponse, TheWriteAgeIsReadAndMustBeABoundedNonNegativeInteger) {
  const std::string record =
      R"({"leaderID":"a","leaderAddr":"h:1","lastUpdated":"2026-11-21T10:30:45.123Z","term":3,)"
      R"("leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11","serial":2)";
  const peer_parsing good = parse(200, record + R"(,"writeAgeMs":1234})");
  ASSERT_FALSE(good.error) << good.answer.message;
  EXPECT_EQ(good.answer.write_age, 1234ms);
  const peer_parsing none = parse(200, record + "}");
  ASSERT_FALSE(none.error);
  EXPECT_FALSE(none.answer.write_age) << "a Go leader or an older s3lect says nothing";
  // More than a day: no lease is that long (max_record_lease), so it cannot be a leader's.
  for (const char* bad : {R"(,"writeAgeMs":-1})", R"(,"writeAgeMs":"5"})", R"(,"writeAgeMs":0.5})",
                          R"(,"writeAgeMs":86400001})"}) {
    const peer_parsing parsing = parse(200, record + bad);
    EXPECT_EQ(parsing.error, s3lect::errc::protocol_error) << bad;
    EXPECT_NE(parsing.answer.message.find("writeAgeMs"), std::string::npos) << bad;
  }
}

TEST(PeerResponse, TheServedTermWinsOverTheRecordsTerm) {
  // The server sets "term" to the term it holds, in place.
  const peer_parsing parsing = parse(200, served_leader_body(43, 0ms));
  ASSERT_FALSE(parsing.error) << parsing.answer.message;
  EXPECT_EQ(parsing.answer.term, 43u);
  EXPECT_EQ(parsing.answer.lease_remaining, 0ms);
}

TEST(PeerResponse, GoLeaderWithoutTermOrLeaseIsALeaderWithTermZero) {
  const std::string go_record =
      R"({"leaderID":"go-1","leaderAddr":"10.0.0.9:8443","lastUpdated":"2026-11-21T10:30:45Z"})";
  const peer_parsing parsing = parse(200, go_record);
  ASSERT_FALSE(parsing.error) << parsing.answer.message;
  EXPECT_TRUE(parsing.answer.leader);
  EXPECT_EQ(parsing.answer.term, 0u);
  EXPECT_EQ(parsing.answer.lease_remaining, std::nullopt);
  EXPECT_EQ(parsing.answer.leader_id, "go-1");
  EXPECT_EQ(parsing.answer.watch, peer_watch_outcome::none);
}

TEST(PeerResponse, UnknownFieldsAreIgnored) {
  const peer_parsing parsing =
      parse(200, R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45Z","term":3,)"
                 R"("leaseRemainingMs":5,"future":{"x":[1,2]}})");
  ASSERT_FALSE(parsing.error) << parsing.answer.message;
  EXPECT_EQ(parsing.answer.term, 3u);
  EXPECT_EQ(parsing.answer.lease_remaining, 5ms);
}

TEST(PeerResponse, LeaseRemainingOfTheWrongTypeOrRangeIsAProtocolError) {
  const std::string head = R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45Z","term":3,)";
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":"12"})"),
                        "leaseRemainingMs: must be a number");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":null})"),
                        "leaseRemainingMs: must be a number");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":-1})"),
                        "leaseRemainingMs: must be a non-negative integer");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":1.5})"),
                        "leaseRemainingMs: must be a non-negative integer");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":86400001})"),
                        "leaseRemainingMs: must be at most 86400000");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":18446744073709551615})"),
                        "leaseRemainingMs: must be at most");
  expect_protocol_error(parse(200, head + R"("leaseRemainingMs":1e300})"),
                        "leaseRemainingMs: must be a non-negative integer");
}

TEST(PeerResponse, RecordFieldsOfTheWrongTypeAreProtocolErrorsNamingTheField) {
  expect_protocol_error(parse(200, R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45Z",)"
                                   R"("term":"42"})"),
                        "leader record: term: must be an integer");
  expect_protocol_error(parse(200, R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45Z",)"
                                   R"("term":-3})"),
                        "term: must not be negative");
  expect_protocol_error(parse(200, R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45Z",)"
                                   R"("term":9007199254740993})"),
                        "term: must be at most");
  expect_protocol_error(parse(200, R"({"leaderID":7,"lastUpdated":"2026-11-21T10:30:45Z"})"),
                        "leaderID: must be a string");
  expect_protocol_error(parse(200, R"({"leaderID":"a","lastUpdated":12})"),
                        "lastUpdated: must be a string");
  expect_protocol_error(parse(200, R"({"leaderID":"a"})"), "lastUpdated: missing");
  expect_protocol_error(parse(200, R"({"lastUpdated":"2026-11-21T10:30:45Z"})"),
                        "leaderID: missing or empty");
  expect_protocol_error(parse(200, R"({"leaderID":"a","lastUpdated":"2999-01-01T00:00:00Z"})"),
                        "lastUpdated: in the year 2200 or later");
}

TEST(PeerResponse, NonJsonOrNonObjectLeaderAnswersAreProtocolErrors) {
  expect_protocol_error(parse(200, "OK"), "leader answer: not JSON");
  expect_protocol_error(parse(200, ""), "leader answer: not JSON");
  expect_protocol_error(parse(200, "<html>leader</html>"), "leader answer: not JSON");
  expect_protocol_error(parse(200, R"({"leaderID":"a",)"), "leader answer: not JSON");
  expect_protocol_error(parse(200, "[1,2,3]"), "leader answer: not an object");
  expect_protocol_error(parse(200, "42"), "leader answer: not an object");
  expect_protocol_error(parse(200, std::string(10000, '[') + std::string(10000, ']')),
                        "leader answer: not JSON");
}

TEST(PeerResponse, GarbageIsQuotedPrintablyAndShortly) {
  const peer_parsing parsing = parse(200, std::string("\x01\x02 bad\r\n") + std::string(500, 'x'));
  EXPECT_EQ(parsing.error, errc::protocol_error);
  EXPECT_NE(parsing.answer.message.find("'?? bad??xxx"), std::string::npos)
      << parsing.answer.message;
  EXPECT_NE(parsing.answer.message.find("x...'"), std::string::npos);
  EXPECT_LT(parsing.answer.message.size(), 400u);
}

TEST(PeerResponse, BodiesOverTheCapAreTooLargeWhateverTheStatus) {
  const std::string huge(cap + 1, ' ');
  for (unsigned status : {200u, 404u, 500u}) {
    const peer_parsing parsing = parse(status, huge);
    EXPECT_EQ(parsing.error, errc::body_too_large) << status;
    EXPECT_EQ(parsing.answer.http_status, status);
    EXPECT_FALSE(parsing.answer.leader);
  }
  // Exactly at the cap is fine (and, being blanks, not JSON).
  EXPECT_EQ(parse(200, std::string(cap, ' ')).error, errc::protocol_error);
}

// ---------------------------------------------------------------------------------------------
// 404: not a leader

TEST(PeerResponse, FollowerAnswerOfAnS3lectServerIsNotAnError) {
  leadership_snapshot snapshot;
  snapshot.term = 7;
  snapshot.leader_id = "node-b";
  const peer_parsing parsing = parse(404, follower_body(snapshot), "changed");
  ASSERT_FALSE(parsing.error) << parsing.answer.message;
  EXPECT_FALSE(parsing.answer.leader);
  EXPECT_EQ(parsing.answer.http_status, 404u);
  EXPECT_EQ(parsing.answer.term, 7u);
  EXPECT_EQ(parsing.answer.leader_id, "node-b");
  EXPECT_EQ(parsing.answer.lease_remaining, std::nullopt);
  EXPECT_EQ(parsing.answer.watch, peer_watch_outcome::changed);
}

TEST(PeerResponse, AReleasingLeaderNamesItsReleasedRecordAndNothingElseDoes) {
  leadership_snapshot snapshot;
  snapshot.term = 7;
  EXPECT_FALSE(parse(404, follower_body(snapshot)).answer.released);
  snapshot.released_etag = "0f1e2d";
  snapshot.released_term = 7;
  const peer_parsing parsing = parse(404, follower_body(snapshot), "changed");
  ASSERT_TRUE(parsing.answer.released);
  EXPECT_EQ(parsing.answer.released->etag, "0f1e2d");
  EXPECT_EQ(parsing.answer.released->term, 7u);
  for (const char* body :
       {R"({"releasedETag":"e"})", R"({"releasedTerm":3})",
        R"({"releasedETag":"","releasedTerm":3})", R"({"releasedETag":5,"releasedTerm":3})",
        R"({"releasedETag":"e","releasedTerm":0})", R"({"releasedETag":"e","releasedTerm":-3})",
        R"({"releasedETag":"e","releasedTerm":"3"})",
        R"({"releasedETag":"e","releasedTerm":9007199254740992})"}) {
    EXPECT_FALSE(parse(404, body).answer.released) << body;
  }
}

TEST(PeerResponse, AReleaseTellsTheSuccessorAndHandoverItsRecordNames) {
  leadership_snapshot snapshot;
  snapshot.term = 7;
  snapshot.released_etag = "0f1e2d";
  snapshot.released_term = 7;
  EXPECT_EQ(parse(404, follower_body(snapshot)).answer.released->successor, "")
      << "a release that names nobody";
  snapshot.released_successor = "node-c";
  snapshot.released_handover = 1500ms;
  const peer_parsing parsing = parse(404, follower_body(snapshot), "changed");
  ASSERT_TRUE(parsing.answer.released);
  EXPECT_EQ(parsing.answer.released->successor, "node-c");
  EXPECT_EQ(parsing.answer.released->handover, 1500ms);
}

TEST(PeerResponse, IllTypedReleaseNamesAreDroppedButTheReleaseStays) {
  const std::string release = R"({"releasedETag":"e","releasedTerm":3,)";
  for (const char* names :
       {R"("successor":5,"handoverMs":"1000"})", R"("successor":"","handoverMs":0})",
        R"("successor":null,"handoverMs":-5})", R"("successor":["x"],"handoverMs":1.5})",
        R"("successor":{},"handoverMs":86400001})"}) {
    const peer_parsing parsing = parse(404, release + names);
    ASSERT_TRUE(parsing.answer.released) << names;
    EXPECT_EQ(parsing.answer.released->etag, "e") << names;
    EXPECT_EQ(parsing.answer.released->successor, "") << names;
    EXPECT_EQ(parsing.answer.released->handover, std::nullopt) << names;
  }
  const peer_parsing longest = parse(404, release + R"("handoverMs":86400000})");
  EXPECT_EQ(longest.answer.released->handover, std::chrono::hours{24});
  const peer_parsing alone = parse(404, R"({"successor":"node-c","handoverMs":1000})");
  EXPECT_FALSE(alone.answer.released) << "names without a released record tell nothing";
}

TEST(PeerResponse, AnyOther404BodyStillMeansNotLeader) {
  for (const std::string& body :
       {std::string("404 page not found\n"), std::string(), std::string(R"({"error":"not_found"})"),
        std::string("[1]"), std::string(R"({"leaderID":5,"term":"7"})"),
        std::string(R"({"leaderID":"x","term":-7})"), std::string(R"({"term":1.5})"),
        std::string(R"({"term":18446744073709551615})"), std::string("\xff\xfe\x00", 3)}) {
    const peer_parsing parsing = parse(404, body);
    EXPECT_FALSE(parsing.error) << body;
    EXPECT_FALSE(parsing.answer.leader);
    EXPECT_EQ(parsing.answer.term, 0u) << body;
  }
  EXPECT_EQ(parse(404, R"({"leaderID":"x","term":-7})").answer.leader_id, "x");
  EXPECT_EQ(parse(404, R"({"leaderID":5})").answer.leader_id, "");
}

// ---------------------------------------------------------------------------------------------
// Other statuses

TEST(PeerResponse, OtherStatusesMapToErrorsWithTheStatusInTheMessage) {
  struct expectation {
    unsigned status;
    errc error;
  };
  for (const expectation& e : {expectation{400, errc::bad_request},
                               {405, errc::bad_request},
                               {403, errc::bad_request},
                               {431, errc::bad_request},
                               {429, errc::throttled},
                               {500, errc::server_error},
                               {503, errc::server_error},
                               {599, errc::server_error},
                               {201, errc::protocol_error},
                               {204, errc::protocol_error},
                               {301, errc::protocol_error},
                               {100, errc::protocol_error},
                               {600, errc::protocol_error},
                               {0, errc::protocol_error}}) {
    const peer_parsing parsing = parse(e.status, R"({"error":"stopped"})", "stopping");
    EXPECT_EQ(parsing.error, e.error) << e.status;
    EXPECT_EQ(parsing.answer.http_status, e.status);
    EXPECT_FALSE(parsing.answer.leader);
    EXPECT_NE(parsing.answer.message.find("HTTP " + std::to_string(e.status)), std::string::npos)
        << parsing.answer.message;
    EXPECT_NE(parsing.answer.message.find(R"({"error":"stopped"})"), std::string::npos);
  }
}

TEST(PeerResponse, ErrorsFromMappedStatusesAreRetriedOnlyWhenTransient) {
  EXPECT_TRUE(is_transient(parse(503, "").error));
  EXPECT_TRUE(is_transient(parse(429, "").error));
  EXPECT_TRUE(is_transient(parse(200, "garbage").error));
  EXPECT_FALSE(is_transient(parse(400, "").error));
}

// ---------------------------------------------------------------------------------------------
// X-S3lect-Watch

TEST(PeerResponse, WatchHeaderValues) {
  EXPECT_EQ(parse_watch_outcome("changed"), peer_watch_outcome::changed);
  EXPECT_EQ(parse_watch_outcome("timeout"), peer_watch_outcome::timeout);
  EXPECT_EQ(parse_watch_outcome("refused"), peer_watch_outcome::refused);
  EXPECT_EQ(parse_watch_outcome("stopping"), peer_watch_outcome::stopping);
  EXPECT_EQ(parse_watch_outcome(""), peer_watch_outcome::none);
  EXPECT_EQ(parse_watch_outcome("Changed"), peer_watch_outcome::none);
  EXPECT_EQ(parse_watch_outcome("later"), peer_watch_outcome::none);
  for (auto outcome :
       {peer_watch_outcome::none, peer_watch_outcome::changed, peer_watch_outcome::timeout,
        peer_watch_outcome::refused, peer_watch_outcome::stopping}) {
    EXPECT_EQ(parse_watch_outcome(to_string(outcome)), outcome);
  }
  // Every outcome the server can send is understood.
  for (auto outcome : {watch_outcome::changed, watch_outcome::timeout, watch_outcome::refused,
                       watch_outcome::stopping}) {
    EXPECT_EQ(to_string(parse_watch_outcome(to_string(outcome))), to_string(outcome));
  }
  EXPECT_EQ(parse(200, served_leader_body(42, 1s), "timeout").answer.watch,
            peer_watch_outcome::timeout);
  EXPECT_EQ(parse(404, "{}", "refused").answer.watch, peer_watch_outcome::refused);
}

}  // namespace
}  // namespace s3lect::detail
