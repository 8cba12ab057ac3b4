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
#include <functional>
#include <map>
#include <string>
#include <utility>
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

// A registration names one token: when it confirms another token for an id (its owner restarted,
// or someone who may write `KEY.candidates/*` replaced it), the token it confirmed before counts no
// more, here and after a change of leadership, and is not read again for I.
TEST(CandidateRegistry, ANewTokenConfirmedForAnIdUnverifiesTheOldOne) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token, "10.0.0.2"), t0);
  const auto first = registry.next_verification(t0);
  ASSERT_TRUE(first);
  registry.verification_done(*first, {registration_verdict::kind::member, 5}, t0 + 10ms);
  ASSERT_EQ(registry.verified(t0 + 10ms).size(), 1u);
  // The registration now names another token, claimed at 10^6.
  registry.note(claim("node-b", 1000000, forged_token, "10.0.0.66"), t0 + 1s);
  const auto second = registry.next_verification(t0 + 3s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->token_sha256, sha256_hex(forged_token));
  registry.verification_done(*second, {registration_verdict::kind::member, 1000000}, t0 + 3s);
  const auto verified = registry.verified(t0 + 3s);
  ASSERT_EQ(verified.size(), 1u) << "one token per id";
  EXPECT_EQ(verified.front().priority, 1000000);
  // The old pair is neither verified again by the memory after a reset, nor read within I.
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token, "10.0.0.2"), t0 + 4s);
  EXPECT_TRUE(registry.verified(t0 + 4s).empty());
  EXPECT_FALSE(registry.next_verification(t0 + 5s).has_value());
  const auto again = registry.next_verification(t0 + 3s + limits().rejection_memory);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->token_sha256, sha256_hex(member_token));
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

// The claimed priority plays no part in the order (issue 35: a forger claiming the highest one
// went first forever): sources take turns in the order they were first heard of, here neither the
// order of the priorities nor that of the addresses.
TEST(CandidateRegistry, OneRegistrationReadPerIntervalInArrivalOrderRefutationsRemembered) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("low", 1, token_of(1), "10.0.0.3"), t0);
  registry.note(claim("mid", 50, token_of(3), "10.0.0.1"), t0 + 1ms);
  registry.note(claim("high", 900, token_of(2), "10.0.0.2"), t0 + 2ms);
  std::vector<std::string> order;
  std::vector<time_point> times;
  // Ask every 100 ms for 20 s; answer each read 50 ms later, refuting all.
  std::optional<candidate_verification> in_flight;
  time_point answer_at{};
  for (time_point now = t0 + 100ms; now < t0 + 20s; now += 100ms) {
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
  // low, mid, high at +0.1 s, +2.1 s, +4.1 s; then each again once its 10 s refutation has passed.
  EXPECT_EQ(order, (std::vector<std::string>{"low", "mid", "high", "low", "mid", "high"}));
  for (std::size_t i = 1; i < times.size(); ++i) EXPECT_GE(times[i] - times[i - 1], 2s);
  EXPECT_GE(times[3] - times[0], 10s);
  // low's second refutation at 10.3 s lasts until 20.3 s.
  EXPECT_EQ(registry.next_verification_at(t0 + 20s), t0 + 20s + 300ms);
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
// Verification no outsider can starve (issue 35): the order of the checks, the refuted and the
// verified pairs remembered beyond their entries.

/// The registrations a store holds: id -> (token, registered priority).
struct fake_registrations {
  std::map<std::string, std::pair<std::string, std::int32_t>> members;
  bool fail_next = false;  ///< The next read fails (kind::unknown).

  registration_verdict judge(const candidate_verification& c) {
    if (std::exchange(fail_next, false)) return {registration_verdict::kind::unknown, 0};
    const auto found = members.find(c.id);
    if (found == members.end() || sha256_hex(found->second.first) != c.token_sha256) {
      return {registration_verdict::kind::not_member, 0};
    }
    return {registration_verdict::kind::member, found->second.second};
  }
};

struct handed_out {
  time_point at;
  candidate_verification check;
};

/// Runs the registry's checks from `from` to `to` in 10 ms steps, as the elector would, each read
/// answered by `store` 50 ms later; `each_step` notes the claims of a step first. Returns every
/// check handed out, and fails when two were in flight or two began within verify_interval.
std::vector<handed_out> drive(candidate_registry& registry, fake_registrations& store,
                              time_point from, time_point to,
                              const std::function<void(time_point)>& each_step = {}) {
  std::vector<handed_out> checks;
  std::optional<candidate_verification> in_flight;
  for (time_point now = from; now < to; now += 10ms) {
    if (each_step) each_step(now);
    if (in_flight && now >= checks.back().at + 50ms) {
      registry.verification_done(*in_flight, store.judge(*in_flight), now);
      in_flight.reset();
    }
    if (auto next = registry.next_verification(now)) {
      EXPECT_FALSE(in_flight.has_value()) << "two reads in flight";
      if (!checks.empty()) {
        EXPECT_GE(now - checks.back().at, limits().verify_interval);
      }
      checks.push_back({now, *next});
      in_flight = next;
    }
  }
  return checks;
}

bool is_verified(const candidate_registry& registry, const std::string& id, time_point now) {
  const auto list = registry.verified(now);
  return std::any_of(list.begin(), list.end(), [&](const candidate& c) { return c.id == id; });
}

/// node-b (registered priority 5) begins a watch at `at` from 10.0.0.2 and renews it every 3 s.
void member_watches(candidate_registry& registry, time_point now, time_point at) {
  if (now < at || (now - at) % 3s != 0ms) return;
  const auto round = static_cast<std::uint64_t>((now - at) / 3s);
  if (round > 0) {
    registry.note(claim("node-b", 5, member_token, "10.0.0.2", kind::watch_end, round), now);
  }
  registry.note(claim("node-b", 5, member_token, "10.0.0.2", kind::watch_begin, round + 1), now);
}

// The measured attack: a fresh token claiming priority 1 000 000 once every 0.9 s from one
// address kept a registered member unverified for 38 s, as the highest claim went first.
TEST(CandidateRegistry, AForgerClaimingTheHighestPriorityFromOneAddressCannotStarveAMember) {
  candidate_registry registry(limits());
  registry.reset(true);
  fake_registrations store;
  store.members["node-b"] = {member_token, 5};
  int forged = 0;
  std::optional<time_point> verified_at;
  const time_point watch_at = t0 + 500ms;
  drive(registry, store, t0, t0 + 30s, [&](time_point now) {
    if ((now - t0) % 900ms == 0ms) {
      registry.note(
          claim("forger-" + std::to_string(forged), 1'000'000, token_of(forged), "10.6.6.6"), now);
      ++forged;
    }
    member_watches(registry, now, watch_at);
    if (!verified_at && is_verified(registry, "node-b", now)) verified_at = now;
  });
  // Two sources: the forger's turn (it was first), then node-b's: within 2 F of its first watch,
  // plus the read's 50 ms.
  ASSERT_TRUE(verified_at.has_value()) << "the member was never verified";
  EXPECT_LE(*verified_at - watch_at, 2 * limits().verify_interval + 100ms);
  EXPECT_EQ(registry.verified(t0 + 30s)[0].priority, 5);
}

// Round robin over addresses, whatever they claim; within one, the longest watching first.
TEST(CandidateRegistry, SourcesTakeTurnsAndWithinOneTheLongestWatchingGoesFirst) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("a-check", 1'000'000, token_of(1), "10.0.0.1"), t0);
  registry.note(claim("a-late", 900'000, token_of(2), "10.0.0.1", kind::watch_begin, 1), t0 + 2ms);
  registry.note(claim("a-early", 1, token_of(3), "10.0.0.1", kind::watch_begin, 2), t0 + 1ms);
  registry.note(claim("b", 800'000, token_of(4), "10.0.0.2"), t0 + 3ms);
  registry.note(claim("c", 2, token_of(5), "10.0.0.3", kind::watch_begin, 3), t0 + 4ms);
  fake_registrations store;  // refutes every claim
  std::vector<std::string> order;
  const time_point start = t0 + 10ms;
  for (const handed_out& h : drive(registry, store, start, start + 9s)) {
    order.push_back(h.check.id);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"a-early", "b", "c", "a-late", "a-check"}));
  // Consistent with it: nothing is due until a refutation runs out, 10 s after the first.
  EXPECT_EQ(registry.next_verification_at(start + 9s), start + 50ms + 10s);
}

// A source that was checked goes to the back of the queue, and a newcomer joins it there: a flood
// of fresh addresses, each never checked, cannot keep ahead of a member whose first read failed
// (nor of one whose changed priority needs a second read).
TEST(CandidateRegistry, AFloodFromFreshAddressesCannotStarveAMemberWhoseReadFailed) {
  candidate_registry registry(limits());
  registry.reset(true);
  fake_registrations store;
  store.members["node-b"] = {member_token, 5};
  store.fail_next = true;  // node-b's first read
  int forged = 0;
  std::optional<time_point> verified_at;
  drive(registry, store, t0, t0 + 60s, [&](time_point now) {
    member_watches(registry, now, t0);
    if ((now - t0) % 900ms == 300ms) {
      registry.note(
          claim("forger-" + std::to_string(forged), 1'000'000, token_of(forged),
                "10.7." + std::to_string(forged / 250) + "." + std::to_string(forged % 250)),
          now);
      ++forged;
    }
    if (!verified_at && is_verified(registry, "node-b", now)) verified_at = now;
  });
  ASSERT_TRUE(verified_at.has_value()) << "the member was never verified";
  // Its failed read at t0 sent it to the back of the queue, but every forger's address was heard
  // of after that: its second read is the next one, F later. (Were a never-checked address to go
  // first, the fresh ones, one per 0.9 s against one read per 2 s, would keep it waiting forever.)
  EXPECT_LE(*verified_at - t0, 2 * limits().verify_interval + 100ms);
}

// A member that holds a watch while waiting for its read is not pushed out by checks from many
// addresses (the unverified cap evicts those holding no watch first).
TEST(CandidateRegistry, AMemberHoldingAWatchIsNotEvictedByAFloodOfChecks) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token, "10.0.0.2", kind::watch_begin, 1), t0);
  for (int n = 0; n < 40; ++n) {
    registry.note(
        claim("x" + std::to_string(n), 1'000'000, token_of(n), "10.8.0." + std::to_string(n)),
        t0 + 1s + n * 10ms);
  }
  const auto shown = ids(registry.shown(t0 + 2s));
  EXPECT_EQ(shown.size(), 16u);
  EXPECT_NE(std::find(shown.begin(), shown.end(), "node-b"), shown.end());
}

TEST(CandidateRegistry, ARefutedClaimIsNotReadAgainForIEvenIfEvictedOrAfterAReset) {
  candidate_registry registry(limits());
  registry.reset(true);
  fake_registrations store;
  registry.note(claim("forger", 1'000'000, forged_token, "10.6.6.6"), t0);
  const auto first = registry.next_verification(t0);
  ASSERT_TRUE(first.has_value());
  registry.verification_done(*first, store.judge(*first), t0 + 10ms);  // refuted until t0+10.01 s
  // Four fresh claims from the same address: the refuted entry is the one evicted.
  for (int n = 0; n < 4; ++n)
    registry.note(claim("f" + std::to_string(n), 1, token_of(n), "10.6.6.6"), t0 + 1s);
  EXPECT_EQ(ids(registry.shown(t0 + 1s)).size(), 4u);
  const auto not_again = [](const std::vector<handed_out>& checks) {
    return std::none_of(checks.begin(), checks.end(),
                        [](const handed_out& h) { return h.check.id == "forger"; });
  };
  // Heard again (re-admitted), and again after a leadership change: not read before t0+10.01 s.
  std::vector<handed_out> checks = drive(registry, store, t0 + 2s, t0 + 5s, [&](time_point now) {
    if (now == t0 + 2s) registry.note(claim("forger", 1'000'000, forged_token, "10.6.6.6"), now);
  });
  EXPECT_TRUE(not_again(checks));
  registry.reset(true);
  checks = drive(registry, store, t0 + 5s, t0 + 10s, [&](time_point now) {
    if (now == t0 + 5s) registry.note(claim("forger", 1'000'000, forged_token, "10.6.6.6"), now);
  });
  EXPECT_TRUE(not_again(checks));
  EXPECT_EQ(registry.next_verification_at(t0 + 10s), t0 + 10s + 10ms);
  checks = drive(registry, store, t0 + 10s, t0 + 11s);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].check.id, "forger");
  EXPECT_EQ(checks[0].at, t0 + 10s + 10ms);
}

TEST(CandidateRegistry, TheRefutedPairsRememberedAreBoundedOldestFirst) {
  candidate_limits l = limits();
  l.max_entries = 4;  // remembers 16 refuted pairs
  l.max_unverified = 4;
  l.verify_interval = 1ms;
  l.rejection_memory = 1000s;
  candidate_registry registry(l);
  registry.reset(true);
  fake_registrations store;
  for (int n = 0; n < 17; ++n) {
    const time_point now = t0 + n * 10ms;
    registry.note(claim("f" + std::to_string(n), 1, token_of(n), "10.6.6.6"), now);
    const auto check = registry.next_verification(now);
    ASSERT_TRUE(check.has_value());
    registry.verification_done(*check, store.judge(*check), now);
  }
  registry.reset(true);
  const time_point later = t0 + 1s;
  registry.note(claim("f1", 1, token_of(1), "10.6.6.6"), later);
  EXPECT_FALSE(registry.next_verification(later).has_value()) << "f1's refutation is remembered";
  registry.note(claim("f0", 1, token_of(0), "10.6.6.6"), later);
  const auto check = registry.next_verification(later);
  ASSERT_TRUE(check.has_value()) << "f0's, the oldest, made room for the 17th";
  EXPECT_EQ(check->id, "f0");
}

TEST(CandidateRegistry, AVerifiedClaimSurvivesALeadershipChangeWithoutARead) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 9, member_token, "10.0.0.2", kind::watch_begin, 1), t0);
  const auto check = registry.next_verification(t0);
  ASSERT_TRUE(check.has_value());
  registry.verification_done(*check, {registration_verdict::kind::member, 3}, t0 + 10ms);
  registry.reset(true);
  // The same claim after the change: verified at once at the registered priority, nothing read.
  registry.note(claim("node-b", 9, member_token, "10.0.0.2", kind::watch_begin, 2), t0 + 1s);
  ASSERT_TRUE(is_verified(registry, "node-b", t0 + 1s));
  EXPECT_EQ(registry.verified(t0 + 1s)[0].priority, 3);
  EXPECT_EQ(registry.verified(t0 + 1s)[0].watching_since, t0 + 1s);
  EXPECT_FALSE(registry.next_verification(t0 + 5s).has_value());
  EXPECT_EQ(registry.next_verification_at(t0 + 5s), std::nullopt);
  // Another token with its id gets nothing from it.
  registry.note(claim("node-b", 9, forged_token, "10.6.6.6"), t0 + 5s);
  EXPECT_EQ(registry.verified(t0 + 5s).size(), 1u);
  // A changed claimed priority is read again, after a change too.
  registry.reset(true);
  registry.note(claim("node-b", 4, member_token, "10.0.0.2"), t0 + 6s);
  EXPECT_FALSE(is_verified(registry, "node-b", t0 + 6s));
  const auto again = registry.next_verification(t0 + 6s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->claimed_priority, 4);
}

TEST(CandidateRegistry, AVerifiedPairNotHeardForItsLifetimeIsReadAgain) {
  candidate_registry registry(limits());  // check_lifetime 20 s
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token), t0);
  const auto check = registry.next_verification(t0);
  ASSERT_TRUE(check.has_value());
  registry.verification_done(*check, {registration_verdict::kind::member, 5}, t0);
  registry.note(claim("node-b", 5, member_token), t0 + 15s);  // heard: its lifetime restarts
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token), t0 + 35s);
  EXPECT_TRUE(is_verified(registry, "node-b", t0 + 35s)) << "heard 20 s ago";
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token), t0 + 55s + 1ms);
  EXPECT_FALSE(is_verified(registry, "node-b", t0 + 55s + 1ms)) << "not heard for 20 s + 1 ms";
  EXPECT_TRUE(registry.next_verification(t0 + 55s + 1ms).has_value());
}

TEST(CandidateRegistry, AClaimChangedWhileItWasReadIsReadAgain) {
  candidate_registry registry(limits());
  registry.reset(true);
  registry.note(claim("node-b", 5, member_token), t0);
  const auto check = registry.next_verification(t0);
  ASSERT_TRUE(check.has_value());
  registry.note(claim("node-b", 6, member_token), t0 + 5ms);
  registry.verification_done(*check, {registration_verdict::kind::member, 5}, t0 + 10ms);
  EXPECT_FALSE(is_verified(registry, "node-b", t0 + 10ms));
  const auto again = registry.next_verification(t0 + 2s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->claimed_priority, 6);
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
