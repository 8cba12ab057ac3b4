// A follower's claim on the leader's side (docs/peer-mode.md#candidates): parsed strictly,
// ignored (never a 400) when malformed, reported to the source as a check or as a watch's begin
// and end in pairs whatever ends the watch, and shown in the 200 answer.
#include <s3lect/health.hpp>

#include "health_protocol.hpp"
#include "support/fake_leadership_source.hpp"
#include "uri_encode.hpp"

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using test::fake_leadership_source;
using kind = candidate_claim::kind;

const std::string path = "/health/leadership";
const std::string token = "00112233445566778899aabbccddeeff";
const std::string claim_query = "candidate=node-b&priority=7&token=" + token;

TEST(CandidateClaim, PercentDecodingIsStrict) {
  EXPECT_EQ(percent_decode("node-b_1.x~"), "node-b_1.x~");
  EXPECT_EQ(percent_decode("a%20b%2Fc%c3%BC"), "a b/c\xc3\xbc");
  EXPECT_EQ(percent_decode(""), "");
  for (const char* bad : {"a+b", "a b", "%", "%2", "%zz", "%2g", "a/b", "a%", "a=b", "\xc3\xbc"}) {
    EXPECT_EQ(percent_decode(bad), std::nullopt) << bad;
  }
  const std::string every_byte = [] {
    std::string bytes;
    for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
    return bytes;
  }();
  EXPECT_EQ(percent_decode(uri_encode(every_byte, false)), every_byte);
  EXPECT_EQ(uri_encode("node b/ü", false), "node%20b%2F%C3%BC");
}

TEST(CandidateClaim, AWellFormedClaimIsParsedAmongOtherParameters) {
  const auto parsed =
      parse_candidate_query("watch=100&term=5&candidate=node%20b&priority=-12&token=" + token);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->id, "node b");
  EXPECT_EQ(parsed->priority, -12);
  EXPECT_EQ(parsed->token, token);
  EXPECT_EQ(parse_candidate_query("candidate=a&priority=1000000&token=" + token)->priority,
            1'000'000);
}

TEST(CandidateClaim, MalformedClaimsAreIgnored) {
  const std::string id = "candidate=node-b";
  const std::string prio = "&priority=7";
  const std::string tok = "&token=" + token;
  const std::vector<std::string> malformed = {
      "",
      id + prio,                              // no token
      id + tok,                               // no priority
      prio.substr(1) + tok,                   // no candidate
      id + prio + tok + "&candidate=node-c",  // twice
      "candidate=" + prio + tok,              // empty id
      "candidate=a%0Ab" + prio + tok,         // control character
      "candidate=%C3%28" + prio + tok,        // not UTF-8
      "candidate=%ED%A0%80" + prio + tok,     // a surrogate
      "candidate=%C0%AF" + prio + tok,        // overlong
      "candidate=a+b" + prio + tok,           // '+' is not a space here
      "candidate=" + std::string(1025, 'x') + prio + tok,
      id + "&priority=1000001" + tok,
      id + "&priority=-1000001" + tok,
      id + "&priority=7.0" + tok,
      id + "&priority=" + tok,
      id + "&priority=--7" + tok,
      id + prio + "&token=" + std::string(31, 'a'),
      id + prio + "&token=" + std::string(33, 'a'),
      id + prio + "&token=00112233445566778899AABBCCDDEEFF",
      id + prio + "&token=00112233445566778899aabbccddeefg",
  };
  for (const std::string& query : malformed) {
    EXPECT_EQ(parse_candidate_query(query), std::nullopt) << query;
    // The request it rides on is still answered as usual: a claim never makes a 400.
    const routed_request read = route_request("GET", path + "?" + query, path);
    EXPECT_EQ(read.type, routed_request::kind::read) << query;
    EXPECT_FALSE(read.candidate.has_value());
    const routed_request watch = route_request("GET", path + "?watch=5&term=2&" + query, path);
    EXPECT_EQ(watch.type, routed_request::kind::watch) << query;
  }
  EXPECT_EQ(parse_candidate_query(std::string(1024, 'x')), std::nullopt);
  EXPECT_EQ(parse_candidate_query("candidate=" + std::string(1024, 'x') + prio + tok)->id.size(),
            1024u);
}

TEST(CandidateClaim, RoutedReadsAndWatchesCarryTheClaim) {
  const routed_request read = route_request("GET", path + "?" + claim_query, path);
  ASSERT_TRUE(read.candidate.has_value());
  EXPECT_EQ(read.candidate->id, "node-b");
  const routed_request bad = route_request("GET", path + "?watch=x&" + claim_query, path);
  EXPECT_EQ(bad.type, routed_request::kind::bad_request);
}

TEST(CandidateClaim, TheLeaderAnswerListsItsCandidatesInPlaceOfAnyRecordField) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = 3;
  snapshot.leader_id = "node-a";
  snapshot.record_json = R"({"leaderID":"node-a","liveCandidates":"forged","term":3})";
  EXPECT_EQ(leader_body(snapshot).find("liveCandidates"), std::string::npos);
  snapshot.candidates = {{"node-b", 5, 1500ms, true}, {"x\"y", 1000, std::nullopt, false}};
  const json::value body = json::parse(leader_body(snapshot));
  const json::array& listed = body.at("liveCandidates").as_array();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0], json::parse(R"({"id":"node-b","priority":5,"watchingMs":1500,)"
                                   R"("verified":true})"));
  EXPECT_EQ(listed[1], json::parse(R"({"id":"x\"y","priority":1000,"verified":false})"));
  EXPECT_EQ(body.at("leaderID"), "node-a");
}

// ---------------------------------------------------------------------------------------------
// The handler reports claims to its source

class CandidateClaimHandler : public ::testing::Test {
 protected:
  void SetUp() override { source.set_leader(5, R"({"leaderID":"node-a","term":5})"); }

  /// Starts a request; its answer lands in answers[name].
  void start(health_handler& handler, const std::string& name, health_request request,
             asio::cancellation_slot slot = {}) {
    handler.async_handle(std::move(request),
                         asio::bind_cancellation_slot(
                             slot, [this, name](boost::system::error_code, health_response r) {
                               answers[name] = std::move(r);
                             }));
  }

  /// Runs until `done` holds (or fails after 10 s).
  void run_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    io.restart();
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "never happened";
      if (io.stopped()) io.restart();
      io.run_one_for(10ms);
    }
  }

  /// The events the source heard: checks under "check", each watch's under its id.
  std::map<std::string, std::vector<kind>> events_by_watch() const {
    std::map<std::string, std::vector<kind>> events;
    for (const candidate_claim& claim : source.claims()) {
      const bool check = claim.event == kind::check;
      events[check ? "check" : std::to_string(claim.watch_id)].push_back(claim.event);
    }
    return events;
  }

  static health_request watch(const std::string& id, const std::string& from) {
    health_request request{
        "GET", path + "?watch=60000&term=5&candidate=" + id + "&priority=1&token=" + token};
    request.source = from;
    return request;
  }

  asio::io_context io;
  fake_leadership_source source{io.get_executor()};
  std::map<std::string, health_response> answers;
};

TEST_F(CandidateClaimHandler, ReadsAreChecksAndRequestsWithoutAClaimReportNothing) {
  health_handler handler(io.get_executor(), source);
  start(handler, "plain", {"GET", path});
  start(handler, "malformed", {"GET", path + "?candidate=a&priority=1&token=short"});
  health_request claimed{"GET", path + "?" + claim_query, "10.0.0.9", true, {"node-b"}};
  start(handler, "claimed", claimed);
  run_until([&] { return answers.size() == 3; });
  EXPECT_EQ(handler.handle({"GET", path + "?" + claim_query}).status, 200u);
  const std::vector<candidate_claim> claims = source.claims();
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].event, kind::check);
  EXPECT_EQ(claims[0].id, "node-b");
  EXPECT_EQ(claims[0].priority, 7);
  EXPECT_EQ(claims[0].source, "10.0.0.9");
  EXPECT_TRUE(claims[0].verified_client);
  EXPECT_EQ(claims[1].event, kind::check);
}

// A verified certificate that does not name the claimed id vouches for nothing.
TEST_F(CandidateClaimHandler, ACertificateVouchesOnlyForAnIdItNames) {
  health_handler handler(io.get_executor(), source);
  handler.handle({"GET", path + "?" + claim_query, "10.0.0.9", true, {"monitor", "node-bb"}});
  handler.handle({"GET", path + "?" + claim_query, "10.0.0.9", false, {"node-b"}});
  const std::vector<candidate_claim> claims = source.claims();
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_FALSE(claims[0].verified_client) << "names monitor and node-bb, claims node-b";
  EXPECT_FALSE(claims[1].verified_client) << "names node-b, but did not verify";
}

TEST_F(CandidateClaimHandler, EveryHeldWatchEndsOnceWhateverEndsIt) {
  health_handler_config config;
  config.max_watchers = 2;
  config.max_watchers_per_source = 2;
  health_handler handler(io.get_executor(), source, config);
  asio::cancellation_signal cancel;
  start(handler, "evicted", watch("a", "10.0.0.1"));
  start(handler, "cancelled", watch("b", "10.0.0.2"), cancel.slot());
  run_until([&] { return handler.active_watches() == 2; });
  // A verified client takes the oldest anonymous slot: that watch ends as evicted.
  health_request verified = watch("c", "10.0.0.3");
  verified.verified_client = true;
  start(handler, "stopped", verified);
  run_until([&] { return answers.count("evicted") == 1; });
  cancel.emit(asio::cancellation_type::terminal);
  run_until([&] { return answers.count("cancelled") == 1; });
  handler.stop();
  run_until([&] { return answers.count("stopped") == 1; });
  EXPECT_EQ(handler.active_watches(), 0u);

  const auto events = events_by_watch();
  ASSERT_EQ(events.size(), 4u) << "the checks and three watches";
  EXPECT_EQ(events.at("check"), std::vector<kind>(3, kind::check));
  for (const auto& [id, list] : events) {
    if (id == "check") continue;
    EXPECT_EQ(list, (std::vector{kind::watch_begin, kind::watch_end})) << "watch " << id;
  }
}

TEST_F(CandidateClaimHandler, AWatchEndedByAChangeEndsOnceAndAWatchNeverHeldNeverBegins) {
  health_handler handler(io.get_executor(), source);
  start(handler, "changed", watch("a", "10.0.0.1"));
  run_until([&] { return handler.active_watches() == 1; });
  source.set_leader(6, R"({"leaderID":"node-a","term":6})");
  run_until([&] { return answers.count("changed") == 1; });
  // A watch of term 5 is answered at once now: a check, with no begin to end.
  start(handler, "at once", watch("b", "10.0.0.1"));
  run_until([&] { return answers.count("at once") == 1; });
  const auto events = events_by_watch();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events.at("check").size(), 2u);
  EXPECT_EQ(events.begin()->second, (std::vector{kind::watch_begin, kind::watch_end}));
}

}  // namespace
}  // namespace s3lect::detail
