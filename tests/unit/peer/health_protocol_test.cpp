// The health endpoint's protocol without sockets: routing, watch parameters, bodies, settings.
#include "health_protocol.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace s3lect::detail {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using kind = routed_request::kind;

const std::string path = "/health/leadership";

std::string header(const health_response& response, std::string_view name) {
  for (const auto& [field, value] : response.headers) {
    if (field == name) return value;
  }
  return "<absent>";
}

leadership_snapshot leader(std::uint64_t term, std::string record) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = term;
  snapshot.record_json = std::move(record);
  snapshot.lease_remaining = milliseconds{12345};
  snapshot.leader_id = "api-7";
  return snapshot;
}

TEST(HealthProtocol, SplitsTargetAtFirstQuestionMark) {
  EXPECT_EQ(split_target("/a").path, "/a");
  EXPECT_EQ(split_target("/a").query, "");
  EXPECT_EQ(split_target("/a?x=1?y").path, "/a");
  EXPECT_EQ(split_target("/a?x=1?y").query, "x=1?y");
  EXPECT_EQ(split_target("/a?").query, "");
}

TEST(HealthProtocol, ParsesWatchAndTerm) {
  const watch_parsing parsing = parse_watch_query("watch=30000&term=42");
  ASSERT_TRUE(parsing.error.empty()) << parsing.error;
  ASSERT_TRUE(parsing.watch);
  EXPECT_EQ(parsing.watch->duration, milliseconds{30000});
  EXPECT_EQ(parsing.watch->term, 42u);
  EXPECT_EQ(parse_watch_query("term=0&watch=0").watch->term, 0u);
  EXPECT_EQ(parse_watch_query("term=18446744073709551615&watch=1").watch->term,
            18446744073709551615u);
}

TEST(HealthProtocol, NoWatchWithoutParametersAndUnknownOnesIgnored) {
  EXPECT_FALSE(parse_watch_query("").watch);
  EXPECT_TRUE(parse_watch_query("").error.empty());
  const watch_parsing parsing = parse_watch_query("x=1&&flag&watch=5&term=2&");
  EXPECT_TRUE(parsing.error.empty()) << parsing.error;
  ASSERT_TRUE(parsing.watch);
  EXPECT_EQ(parsing.watch->duration, milliseconds{5});
}

TEST(HealthProtocol, HugeWatchIsClampedNotRefused) {
  const watch_parsing parsing = parse_watch_query("watch=18446744073709551615&term=1");
  ASSERT_TRUE(parsing.watch) << parsing.error;
  EXPECT_EQ(parsing.watch->duration, milliseconds::max());
}

TEST(HealthProtocol, RefusesBadWatchParameters) {
  for (const char* query :
       {"watch=1", "term=1", "watch=&term=1", "watch=-1&term=1", "watch=+1&term=1",
        "watch=1.5&term=1", "watch=1&term=x", "watch=1&term=18446744073709551616",
        "watch=1&term=1&term=2", "watch=1&watch=1&term=1", "watch=%31&term=1", "watch&term=1",
        "watch= 1&term=1", "watch=1&term=1#frag"}) {
    const watch_parsing parsing = parse_watch_query(query);
    EXPECT_FALSE(parsing.watch) << query;
    EXPECT_FALSE(parsing.error.empty()) << query;
  }
  EXPECT_EQ(parse_watch_query("watch=1").error, "term: required with watch");
  EXPECT_EQ(parse_watch_query("term=1").error, "watch: required with term");
  EXPECT_EQ(parse_watch_query("watch=1&watch=2&term=1").error, "watch: given twice");
  EXPECT_EQ(parse_watch_query("watch=abc&term=1").error,
            "watch: must be a decimal number, is 'abc'");
}

TEST(HealthProtocol, RoutesByPathThenMethodThenParameters) {
  EXPECT_EQ(route_request("GET", path, path).type, kind::read);
  EXPECT_EQ(route_request("GET", path + "?other=1", path).type, kind::read);
  EXPECT_EQ(route_request("GET", path + "?watch=10&term=3", path).type, kind::watch);
  EXPECT_EQ(route_request("GET", path + "?watch=10&term=3", path).watch.term, 3u);
  EXPECT_EQ(route_request("GET", path + "?watch=10", path).type, kind::bad_request);
  EXPECT_EQ(route_request("POST", path, path).type, kind::method_not_allowed);
  EXPECT_EQ(route_request("HEAD", path, path).type, kind::method_not_allowed);
  EXPECT_EQ(route_request("get", path, path).type, kind::method_not_allowed);
  // A bad query on a POST is still a 405: the method is wrong whatever the parameters.
  EXPECT_EQ(route_request("POST", path + "?watch=x", path).type, kind::method_not_allowed);
  EXPECT_EQ(route_request("GET", path + "/", path).type, kind::not_found);
  EXPECT_EQ(route_request("GET", "/", path).type, kind::not_found);
  EXPECT_EQ(route_request("POST", "/other", path).type, kind::not_found);
  EXPECT_EQ(route_request("GET", "/health/Leadership", path).type, kind::not_found);
}

TEST(HealthProtocol, HoldsTermOnlyWhileLeaderWithThatTerm) {
  leadership_snapshot snapshot = leader(7, "{}");
  EXPECT_TRUE(holds_term(snapshot, 7));
  EXPECT_FALSE(holds_term(snapshot, 6));
  EXPECT_FALSE(holds_term(snapshot, 8));
  snapshot.is_leader = false;
  EXPECT_FALSE(holds_term(snapshot, 7));
}

TEST(HealthProtocol, LeaderBodyIsRecordPlusTermAndLease) {
  const std::string record =
      R"({"leaderID":"api-7","leaderAddr":"10.0.1.42:8443","lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11","extra":[1,{"a":"b"}]})";
  const health_response response = leadership_response(leader(42, record));
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(header(response, "Content-Type"), "application/json");
  EXPECT_EQ(header(response, "Cache-Control"), "no-store");
  EXPECT_EQ(header(response, "X-S3lect-Watch"), "<absent>");
  EXPECT_EQ(
      response.body,
      R"({"leaderID":"api-7","leaderAddr":"10.0.1.42:8443","lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11","extra":[1,{"a":"b"}],"leaseRemainingMs":12345,"serial":0})");
}

TEST(HealthProtocol, LeaderBodyFollowsEachNewRecordTermAndLeader) {
  // leader_body keeps the serialized record between answers: every input must still count.
  const std::string first = R"({"leaderID":"api-7","nonce":"a"})";
  const std::string second = R"({"leaderID":"api-7","nonce":"b"})";
  EXPECT_EQ(leader_body(leader(1, first)),
            R"({"leaderID":"api-7","nonce":"a","term":1,"leaseRemainingMs":12345,"serial":0})");
  EXPECT_EQ(leader_body(leader(1, second)),
            R"({"leaderID":"api-7","nonce":"b","term":1,"leaseRemainingMs":12345,"serial":0})");
  EXPECT_EQ(leader_body(leader(2, second)),
            R"({"leaderID":"api-7","nonce":"b","term":2,"leaseRemainingMs":12345,"serial":0})");
  leadership_snapshot later = leader(2, second);
  later.lease_remaining = milliseconds{77};
  later.serial = 5;
  EXPECT_EQ(leader_body(later),
            R"({"leaderID":"api-7","nonce":"b","term":2,"leaseRemainingMs":77,"serial":5})");
  leadership_snapshot other_leader = leader(2, "not json");
  EXPECT_EQ(leader_body(other_leader),
            R"({"leaderID":"api-7","term":2,"leaseRemainingMs":12345,"serial":0})");
  other_leader.leader_id = "api-8";
  EXPECT_EQ(leader_body(other_leader),
            R"({"leaderID":"api-8","term":2,"leaseRemainingMs":12345,"serial":0})");
}

TEST(HealthProtocol, LeaderBodyPutsItsOwnFieldsLastWhateverTheRecordHeld) {
  const std::string record =
      R"({"leaderID":"x","serial":99,"leaseRemainingMs":1,"writeAgeMs":2,"term":4,"z":0})";
  EXPECT_EQ(leader_body(leader(4, record)),
            R"({"leaderID":"x","term":4,"z":0,"leaseRemainingMs":12345,"serial":0})");
}

TEST(HealthProtocol, LeaderBodyGivesTheWriteAgeWhenKnown) {
  leadership_snapshot snapshot = leader(4, R"({"leaderID":"x","term":4})");
  snapshot.write_age = milliseconds{1500};
  EXPECT_EQ(leader_body(snapshot),
            R"({"leaderID":"x","term":4,"leaseRemainingMs":12345,"serial":0,"writeAgeMs":1500})");
}

TEST(HealthProtocol, HttpResponseBytesForEachVersionAndPersistence) {
  health_response response;
  response.status = 404;
  response.headers = {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}};
  response.body = "{}";
  std::string out = "kept:";
  append_http_response(out, response, 11, true);
  EXPECT_EQ(out,
            "kept:HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
            "Cache-Control: no-store\r\nContent-Length: 2\r\n\r\n{}");
  out.clear();
  append_http_response(out, response, 11, false);
  EXPECT_EQ(out,
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
            "Cache-Control: no-store\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  out.clear();
  append_http_response(out, response, 10, true);
  EXPECT_EQ(out,
            "HTTP/1.0 404 Not Found\r\nContent-Type: application/json\r\n"
            "Cache-Control: no-store\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}");
  out.clear();
  append_http_response(out, response, 10, false);
  EXPECT_EQ(out.find("Connection"), std::string::npos) << out;
}

TEST(HealthProtocol, HttpResponseToHeadKeepsLengthWithoutBody) {
  health_response response;
  response.status = 200;
  response.body = "0123456789";
  std::string out;
  append_http_response(out, response, 11, true, true);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
  response.status = 299;  // no reason phrase known: the status line ends after the code
  out.clear();
  append_http_response(out, response, 11, true);
  EXPECT_EQ(out.substr(0, 17), "HTTP/1.1 299 \r\nCo");
}

TEST(HealthProtocol, SerialIsParsedOnlyWithAWatch) {
  const watch_parsing with = parse_watch_query("watch=30000&term=7&serial=12");
  ASSERT_TRUE(with.watch) << with.error;
  EXPECT_EQ(with.watch->serial, std::optional<std::uint64_t>(12));
  const watch_parsing without = parse_watch_query("watch=30000&term=7");
  ASSERT_TRUE(without.watch);
  EXPECT_FALSE(without.watch->serial);
  EXPECT_FALSE(parse_watch_query("serial=3").error.empty()) << "a serial alone means nothing";
  EXPECT_FALSE(parse_watch_query("watch=1&term=7&serial=x").error.empty());
  EXPECT_FALSE(parse_watch_query("watch=1&term=7&serial=1&serial=2").error.empty());
}

TEST(HealthProtocol, AWatchWithASerialEndsWhenTheLeaderWritesAgain) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = 7;
  snapshot.serial = 12;
  watch_params watch{std::chrono::seconds{30}, 7, 12};
  EXPECT_TRUE(holds_watch(snapshot, watch));
  snapshot.serial = 13;
  EXPECT_FALSE(holds_watch(snapshot, watch)) << "a renewal ends the watch";
  watch.serial.reset();
  EXPECT_TRUE(holds_watch(snapshot, watch)) << "without a serial only the term counts";
  snapshot.term = 8;
  EXPECT_FALSE(holds_watch(snapshot, watch));
}

TEST(HealthProtocol, LeaderBodyAddsTermToGoRecordAndClampsNegativeLease) {
  leadership_snapshot snapshot =
      leader(3, R"({"leaderID":"go-1","leaderAddr":"h:1","lastUpdated":"2024-10-27T10:30:45Z"})");
  snapshot.lease_remaining = milliseconds{-5};
  const json::value body = json::parse(leader_body(snapshot));
  EXPECT_EQ(body.at("leaderID"), "go-1");
  EXPECT_EQ(body.at("term").to_number<std::uint64_t>(), 3u);
  EXPECT_EQ(body.at("leaseRemainingMs").to_number<std::int64_t>(), 0);
}

TEST(HealthProtocol, LeaderBodyFallsBackWhenRecordIsNotAnObject) {
  for (const char* record : {"", "[1,2]", "not json", "{\"a\":"}) {
    const json::value body = json::parse(leader_body(leader(9, record)));
    EXPECT_EQ(body.at("leaderID"), "api-7") << record;
    EXPECT_EQ(body.at("term").to_number<std::uint64_t>(), 9u) << record;
    EXPECT_EQ(body.at("leaseRemainingMs").to_number<std::int64_t>(), 12345) << record;
  }
}

TEST(HealthProtocol, FollowerGets404WithStatus) {
  leadership_snapshot snapshot;
  snapshot.term = 11;
  snapshot.leader_id = "node \"b\"\n";
  const health_response response = leadership_response(snapshot);
  EXPECT_EQ(response.status, 404u);
  EXPECT_EQ(response.body, R"({"leader":false,"leaderID":"node \"b\"\n","term":11})");
  EXPECT_EQ(header(response, "Content-Type"), "application/json");
}

TEST(HealthProtocol, WatchResponseCarriesOutcome) {
  EXPECT_EQ(header(watch_response(leader(1, "{}"), watch_outcome::timeout), "X-S3lect-Watch"),
            "timeout");
  EXPECT_EQ(header(watch_response(leadership_snapshot{}, watch_outcome::changed), "X-S3lect-Watch"),
            "changed");
  EXPECT_EQ(to_string(watch_outcome::refused), "refused");
  EXPECT_EQ(to_string(watch_outcome::stopping), "stopping");
}

TEST(HealthProtocol, RejectionsHaveStatusAndJsonBody) {
  const health_response bad = *rejection_response(route_request("GET", path + "?watch=1", path));
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(bad.body, R"({"error":"bad_request","message":"term: required with watch"})");
  const health_response method = *rejection_response(route_request("DELETE", path, path));
  EXPECT_EQ(method.status, 405u);
  EXPECT_EQ(header(method, "Allow"), "GET");
  EXPECT_EQ(method.body, R"({"error":"method_not_allowed"})");
  const health_response missing = *rejection_response(route_request("GET", "/x", path));
  EXPECT_EQ(missing.status, 404u);
  EXPECT_EQ(missing.body, R"({"error":"not_found"})");
  EXPECT_FALSE(rejection_response(route_request("GET", path, path)));
  EXPECT_EQ(header_too_large_response().status, 431u);
  EXPECT_EQ(stopped_response().status, 503u);
}

TEST(HealthProtocol, SplitsBindAddresses) {
  const auto v4 = split_bind_address("127.0.0.1:8443");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8443);
  const auto v6 = split_bind_address("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":80", "::1:80", "[::1]", "h:65536",
                          "h:-1", "h:80x", "[]:1"}) {
    EXPECT_FALSE(split_bind_address(bad)) << bad;
  }
}

health_server_config valid_server_config() {
  health_server_config config;
  config.bind_address = "127.0.0.1:0";
  config.tls.certificate_pem = "pem";
  config.tls.private_key_file = "/key.pem";
  return config;
}

TEST(HealthProtocol, ValidatesHandlerConfig) {
  EXPECT_FALSE(health_handler_config{}.validate());
  health_handler_config config;
  config.path = "health";
  EXPECT_EQ(*config.validate(), "path: must start with '/', is 'health'");
  config.path = "/h?x";
  EXPECT_TRUE(config.validate());
  config.path = "/h";
  config.max_watch = milliseconds{-1};
  EXPECT_EQ(*config.validate(), "max_watch: must not be negative, is -1 ms");
}

TEST(HealthProtocol, ValidatesServerConfig) {
  EXPECT_FALSE(valid_server_config().validate());
  auto expect_error = [](health_server_config config, const std::string& prefix) {
    const auto error = config.validate();
    ASSERT_TRUE(error) << prefix;
    EXPECT_EQ(error->substr(0, prefix.size()), prefix) << *error;
  };
  health_server_config config = valid_server_config();
  config.bind_address = "";
  expect_error(config, "bind_address:");
  config.bind_address = "localhost:80";
  expect_error(config, "bind_address: 'localhost' is not an IP address");
  config = valid_server_config();
  config.tls.certificate_file = "/cert.pem";
  expect_error(config, "tls.certificate_file: set exactly one");
  config = valid_server_config();
  config.tls.private_key_file.clear();
  expect_error(config, "tls.private_key_file: set exactly one");
  config = valid_server_config();
  config.tls.require_client_cert = true;
  expect_error(config, "tls.require_client_cert: needs tls.ca_file or tls.ca_pem");
  config.tls.ca_pem = "ca";
  EXPECT_FALSE(config.validate());
  config = valid_server_config();
  config.max_header_bytes = 100;
  expect_error(config, "max_header_bytes:");
  config = valid_server_config();
  config.read_timeout = milliseconds{0};
  expect_error(config, "read_timeout:");
  config = valid_server_config();
  config.idle_timeout = milliseconds{0};
  expect_error(config, "idle_timeout:");
  config = valid_server_config();
  config.max_connections = 0;
  expect_error(config, "max_connections:");
  config = valid_server_config();
  config.handler.path = "x";
  expect_error(config, "handler.path:");
}

}  // namespace
}  // namespace s3lect::detail
