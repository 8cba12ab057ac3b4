// The leader's candidates (docs/peer-mode.md#candidates): the registry's caps and its keying by
// token, the watching-since rule, the registration read budget, the registration objects on a
// memory store, and an elector that gives its core only the claims a member could have made.
#include "candidate_registry.hpp"
#include "candidate_registration.hpp"
#include "coordination.hpp"
#include "sha256.hpp"

#include <s3lect/config.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/health.hpp>
#include <s3lect/memory_storage.hpp>

#include "support/elector_group.hpp"
#include "support/test_certificates.hpp"

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

using namespace std::chrono_literals;
using kind = candidate_claim::kind;
using time_point = candidate_registry::time_point;

const time_point t0 = time_point{} + 1000s;
const std::string member_token = "00112233445566778899aabbccddeeff";
const std::string forged_token = "ffeeddccbbaa99887766554433221100";

candidate_limits limits() {
  candidate_limits l;
  l.watch_gap = 1s;
  l.check_lifetime = 20s;
  l.verify_interval = 2s;
  l.rejection_memory = 10s;
  return l;
}

candidate_claim claim(std::string id, std::int32_t priority, std::string token,
                      std::string source = "10.0.0.1", kind event = kind::check,
                      std::uint64_t watch_id = 0) {
  candidate_claim c;
  c.event = event;
  c.id = std::move(id);
  c.priority = priority;
  c.token = std::move(token);
  c.source = std::move(source);
  c.watch_id = watch_id;
  return c;
}

/// A token for the n-th claimant: 32 lowercase hex digits.
std::string token_of(int n) {
  std::string t = "0000000000000000000000000000" + std::to_string(1000 + n);
  return t.substr(t.size() - 32);
}

candidate_claim certified(std::string id, std::int32_t priority) {
  candidate_claim c = claim(std::move(id), priority, member_token);
  c.verified_client = true;
  return c;
}

std::vector<std::string> ids(const std::vector<candidate_info>& shown) {
  std::vector<std::string> out;
  for (const auto& c : shown) out.push_back(c.id);
  return out;
}

TEST(CandidateRegistry, NothingIsKeptWhileNotLeadingAndEveryLeadershipStartsEmpty) {
  candidate_registry registry(limits());
  registry.note(certified("node-b", 1), t0);
  EXPECT_TRUE(registry.shown(t0).empty());
  registry.reset(true);
  registry.note(certified("node-b", 1), t0);
  EXPECT_EQ(registry.verified(t0).size(), 1u);
  registry.reset(true);
  EXPECT_TRUE(registry.shown(t0).empty());
}

TEST(CandidateRegistry, UnverifiedClaimsAreCappedPerSourceAndInTotal) {
  candidate_registry registry(limits());
  registry.reset(true);
  // Six claims from one source: only the four heard of last stay.
  for (int n = 0; n < 6; ++n) {
    registry.note(claim("s1-" + std::to_string(n), 1, token_of(n)), t0 + n * 1ms);
  }
  EXPECT_EQ(ids(registry.shown(t0 + 10ms)),
            (std::vector<std::string>{"s1-2", "s1-3", "s1-4", "s1-5"}));
  // Twenty more sources: never more than 16 unverified entries.
  for (int n = 0; n < 20; ++n) {
    registry.note(claim("x" + std::to_string(n), 1, token_of(n), "10.1.0." + std::to_string(n)),
                  t0 + 100ms + n * 1ms);
  }
  EXPECT_EQ(registry.shown(t0 + 1s).size(), 16u);
  // Members with certificates fill the rest, up to 32 entries in all.
  for (int n = 0; n < 20; ++n) registry.note(certified("m" + std::to_string(n), 5), t0 + 2s);
  const auto shown = registry.shown(t0 + 2s);
  EXPECT_EQ(shown.size(), 32u);
  EXPECT_EQ(std::count_if(shown.begin(), shown.end(), [](auto& c) { return c.verified; }), 20);
  // A full registry: a stranger's claim takes an unverified entry's place, never a member's.
  registry.note(claim("stranger", 1'000'000, forged_token, "10.9.9.9"), t0 + 3s);
  const auto after = registry.shown(t0 + 3s);
  EXPECT_EQ(after.size(), 32u);
  EXPECT_EQ(std::count_if(after.begin(), after.end(), [](auto& c) { return c.verified; }), 20);
  EXPECT_EQ(registry.verified(t0 + 3s).size(), 20u);
}

TEST(CandidateRegistry, AForgerWithAMembersIdCanNeitherDisplaceNorBecomeIt) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 3, member_token, "10.0.0.2", kind::watch_begin, 1), t0);
  // The member's claim is read first, and its registration confirms it.
  const auto member = registry.next_verification(t0);
  ASSERT_TRUE(member.has_value());
  registry.verification_done(*member, {registration_verdict::kind::member, 3}, t0 + 10ms);
  ASSERT_EQ(registry.verified(t0 + 10ms).size(), 1u);

  // The forger claims the same id at priority 1000 from many addresses with other tokens.
  for (int n = 0; n < 40; ++n) {
    registry.note(claim("node-b", 1000, token_of(n), "10.2.0." + std::to_string(n),
                        kind::watch_begin, 100 + n),
                  t0 + 1s + n * 1ms);
  }
  const auto verified = registry.verified(t0 + 2s);
  ASSERT_EQ(verified.size(), 1u);
  EXPECT_EQ(verified[0].priority, 3);
  EXPECT_EQ(verified[0].watching_since, t0);
  // Its claims are checked against node-b's registration and refuted.
  const auto check = registry.next_verification(t0 + 3s);
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->id, "node-b");
  EXPECT_NE(check->token_sha256, sha256_hex(member_token));
  registry.verification_done(*check, {registration_verdict::kind::not_member, 0}, t0 + 3s);
  EXPECT_EQ(registry.verified(t0 + 3s).size(), 1u);
}

TEST(CandidateRegistry, WatchingSinceSurvivesShortGapsAndRestartsAfterLongOnes) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(certified("node-b", 1), t0);
  auto watch = [&](kind event, std::uint64_t id, time_point at) {
    candidate_claim c = certified("node-b", 1);
    c.event = event;
    c.watch_id = id;
    registry.note(c, at);
  };
  watch(kind::watch_begin, 1, t0 + 1s);
  EXPECT_EQ(registry.verified(t0 + 1s)[0].watching_since, t0 + 1s);
  EXPECT_TRUE(registry.verified(t0 + 1s)[0].watching);
  watch(kind::watch_end, 1, t0 + 5s);
  // Between an answer and the next watch it still counts as watching, for the gap at most.
  EXPECT_TRUE(registry.verified(t0 + 5s + 900ms)[0].watching);
  EXPECT_EQ(registry.shown(t0 + 5s + 900ms)[0].watching, 4900ms);
  EXPECT_FALSE(registry.verified(t0 + 6s + 1ms)[0].watching);
  EXPECT_FALSE(registry.shown(t0 + 6s + 1ms)[0].watching.has_value());
  watch(kind::watch_begin, 2, t0 + 5s + 900ms);  // within the 1 s gap: the run goes on
  EXPECT_EQ(registry.verified(t0 + 6s)[0].watching_since, t0 + 1s);
  EXPECT_EQ(registry.shown(t0 + 6s)[0].watching, 5000ms);
  // Two watches at once (a renewal's answer racing the next watch): one ending keeps the run.
  watch(kind::watch_begin, 3, t0 + 7s);
  watch(kind::watch_end, 2, t0 + 8s);
  EXPECT_TRUE(registry.verified(t0 + 8s)[0].watching);
  watch(kind::watch_end, 3, t0 + 9s);
  watch(kind::watch_begin, 4, t0 + 10s + 1ms);  // more than the gap: a new run
  EXPECT_EQ(registry.verified(t0 + 11s)[0].watching_since, t0 + 10s + 1ms);
  // A candidate heard of only by checks is forgotten after check_lifetime; one watching is not.
  watch(kind::watch_end, 4, t0 + 12s);
  EXPECT_EQ(registry.shown(t0 + 32s).size(), 1u);
  EXPECT_TRUE(registry.shown(t0 + 32s + 1ms).empty());
}

// A best candidate between two watches keeps its place: were it to drop out for the answer's
// round trip, a release at that moment would name the next best instead.
TEST(CandidateRegistry, ACandidateBetweenWatchesKeepsItsRankUntilTheGapRunsOut) {
  candidate_registry registry(limits());
  registry.reset(true);
  auto watch = [&](std::string id, std::int32_t priority, kind event, std::uint64_t watch_id,
                   time_point at) {
    candidate_claim c = certified(std::move(id), priority);
    c.event = event;
    c.watch_id = watch_id;
    registry.note(c, at);
  };
  watch("node-high", 2, kind::watch_begin, 1, t0);
  watch("node-low", 1, kind::watch_begin, 2, t0);
  EXPECT_EQ(registry.next_change_at(t0), std::nullopt) << "both hold a watch";
  watch("node-high", 2, kind::watch_end, 1, t0 + 3s);
  EXPECT_EQ(best_successor(registry.verified(t0 + 3s + 10ms), "leader"), "node-high");
  // The elector refreshes its core's list when the gap runs out, with no claim to prompt it.
  const std::optional<time_point> change = registry.next_change_at(t0 + 3s + 10ms);
  ASSERT_TRUE(change.has_value());
  EXPECT_GT(*change, t0 + 4s);
  EXPECT_LE(*change, t0 + 4s + 1ms);
  EXPECT_FALSE(registry.verified(*change)[0].watching);
  EXPECT_EQ(best_successor(registry.verified(*change), "leader"), "node-low")
      << "only a watching candidate is named";
  // Next: its life as a candidate heard of no more (check_lifetime after it was last heard).
  const std::optional<time_point> forgotten = registry.next_change_at(*change);
  ASSERT_TRUE(forgotten.has_value());
  EXPECT_EQ(registry.verified(*forgotten).size(), 1u);
}

TEST(CandidateRegistry, OneRegistrationReadPerIntervalHighestClaimFirstRefutationsRemembered) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("low", 1, token_of(1), "10.0.0.1"), t0);
  registry.note(claim("high", 900, token_of(2), "10.0.0.2"), t0);
  registry.note(claim("mid", 50, token_of(3), "10.0.0.3"), t0);
  std::vector<std::string> order;
  std::vector<time_point> times;
  // Ask every 100 ms for 20 s; answer each read 50 ms later, refuting all.
  std::optional<candidate_verification> in_flight;
  time_point answer_at{};
  for (time_point now = t0; now < t0 + 20s; now += 100ms) {
    if (in_flight && now >= answer_at) {
      registry.verification_done(*in_flight, {registration_verdict::kind::not_member, 0}, now);
      in_flight.reset();
    }
    if (auto next = registry.next_verification(now)) {
      EXPECT_FALSE(in_flight.has_value()) << "two reads in flight";
      order.push_back(next->id);
      times.push_back(now);
      in_flight = next;
      answer_at = now + 50ms;
    }
  }
  // high, mid, low at t0, +2 s, +4 s; then each again once its 10 s refutation has passed.
  EXPECT_EQ(order, (std::vector<std::string>{"high", "mid", "low", "high", "mid", "low"}));
  for (std::size_t i = 1; i < times.size(); ++i) EXPECT_GE(times[i] - times[i - 1], 2s);
  EXPECT_GE(times[3] - times[0], 10s);
  // high's refutation at 10.2 s lasts until 20.2 s.
  EXPECT_EQ(registry.next_verification_at(t0 + 20s), t0 + 20s + 200ms);
}

TEST(CandidateRegistry, TheRegisteredPriorityWinsAndAChangedClaimIsCheckedAgain) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 9, member_token), t0);
  const auto check = registry.next_verification(t0);
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->claimed_priority, 9);
  registry.verification_done(*check, {registration_verdict::kind::member, 2}, t0);
  ASSERT_EQ(registry.verified(t0).size(), 1u);
  EXPECT_EQ(registry.verified(t0)[0].priority, 2);
  registry.note(claim("node-b", 9, member_token), t0 + 1s);  // the same claim: stays verified
  EXPECT_EQ(registry.verified(t0 + 1s).size(), 1u);
  registry.note(claim("node-b", 4, member_token), t0 + 2s);  // a new priority: read again
  EXPECT_TRUE(registry.verified(t0 + 2s).empty());
  EXPECT_TRUE(registry.next_verification(t0 + 2s).has_value());
}

TEST(CandidateRegistry, AVerdictFromAnEarlierLeadershipIsDropped) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 1, member_token), t0);
  const auto check = registry.next_verification(t0);
  ASSERT_TRUE(check.has_value());
  registry.reset(true);
  registry.note(claim("node-b", 1, member_token), t0 + 1s);
  registry.verification_done(*check, {registration_verdict::kind::member, 1}, t0 + 1s);
  EXPECT_TRUE(registry.verified(t0 + 1s).empty());
}

// ---------------------------------------------------------------------------------------------
// Registration objects

TEST(CandidateRegistration, KeysAreHashedAndBodiesHoldOnlyTheTokensHash) {
  EXPECT_EQ(registration_key("group/leader.json", "node-b"),
            "group/leader.json.candidates/" + sha256_hex("node-b").substr(0, 32));
  EXPECT_NE(registration_key("k", "a/../b"), registration_key("k", "a/../c"));
  const std::string body = registration_body("node-b", 7, member_token);
  EXPECT_EQ(body.find(member_token), std::string::npos);
  EXPECT_NE(body.find(sha256_hex(member_token)), std::string::npos);
}

TEST(CandidateRegistration, RoundTripThroughAStore) {
  memory_store store;
  const std::string key = registration_key("group/leader.json", "node-b");
  store.put(key, registration_body("node-b", 7, member_token), put_condition::absent());
  const auto found = store.get(key);
  ASSERT_TRUE(found.has_value());
  const std::optional<std::string> body = found->body;
  const candidate_verification member{1, "node-b", sha256_hex(member_token), 1000};
  EXPECT_EQ(judge_registration(body, member).outcome, registration_verdict::kind::member);
  EXPECT_EQ(judge_registration(body, member).priority, 7);
  for (const candidate_verification& other :
       {candidate_verification{1, "node-b", sha256_hex(forged_token), 7},
        candidate_verification{1, "node-c", sha256_hex(member_token), 7}}) {
    EXPECT_EQ(judge_registration(body, other).outcome, registration_verdict::kind::not_member);
  }
  EXPECT_EQ(judge_registration(std::nullopt, member).outcome,
            registration_verdict::kind::not_member);
  for (const char* garbage :
       {"", "[]", "{}", R"({"id":"node-b","priority":"7","tokenSha256":1})"}) {
    EXPECT_EQ(judge_registration(std::string(garbage), member).outcome,
              registration_verdict::kind::not_member)
        << garbage;
  }
}

}  // namespace
}  // namespace s3lect::detail
