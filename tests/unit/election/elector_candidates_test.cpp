// An elector's candidates end to end on the manual clock (docs/peer-mode.md#candidates): claims
// reach it through a health_handler on its health_source(), registrations are written and read
// on its memory store, and only a claim a member could have made is verified. A forged watcher
// claiming priority 1000 stays unverified and costs at most one registration read per F.
#include "candidate_registration.hpp"

#include <s3lect/config.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/memory_storage.hpp>

#include "support/elector_group.hpp"
#include "support/peer_watch_config.hpp"
#include "support/test_certificates.hpp"

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace s3lect::detail {
namespace {

using namespace std::chrono_literals;

const std::string lock_key = "group/leader.json";
const std::string member_token = "00112233445566778899aabbccddeeff";
const std::string forged_token = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

elector_config candidate_config(std::string id) {
  static const test::test_pki pki = test::make_test_pki("s3lect candidates test CA");
  return test::peer_watch_config(lock_key, std::move(id), 1s, pki.ca.certificate, 2);
}

/// A request of `id` claiming `priority` with `token`, from `source`: a watch of `term`, or a
/// plain read with term 0.
health_request claiming(const std::string& id, int priority, const std::string& token,
                        const std::string& source, std::uint64_t term = 0) {
  std::string target = "/health/leadership?";
  if (term != 0) target += "watch=60000&term=" + std::to_string(term) + "&";
  target += "candidate=" + id + "&priority=" + std::to_string(priority) + "&token=" + token;
  health_request request{"GET", target, source};
  return request;
}

const candidate_info* find(const std::vector<candidate_info>& list, const std::string& id,
                           bool verified) {
  for (const candidate_info& c : list) {
    if (c.id == id && c.verified == verified) return &c;
  }
  return nullptr;
}

struct one_leader : test::elector_group {
  explicit one_leader(const std::function<void(elector_config&)>& tweak = {})
      : elector_group(1, [&tweak](int) {
          elector_config config = candidate_config("node-0");
          if (tweak) tweak(config);
          return config;
        }) {
    start_all();
    if (!run_until([this] { return leader_count() == 1; })) throw std::runtime_error("no leader");
  }
  elector& leader() { return *electors[0]; }
};

/// A leader's tweak that keeps, in `lines`, every list of verified candidates its elector gives
/// the core (trace log). Preemption is off: a candidate that outranks the leader would make it
/// hand over, which is not these tests' business (election_core_preemption_test.cpp is).
std::function<void(elector_config&)> keeping_core_lists(
    std::shared_ptr<std::vector<std::string>> lines) {
  return [lines](elector_config& config) {
    config.coordination.preempt = preemption::off;
    config.log.level = log_level::trace;
    config.log.sink = [lines](log_level, std::string_view line) {
      if (line.starts_with("verified candidates given to the core:")) lines->emplace_back(line);
    };
  };
}

TEST(ElectorCandidates, EveryPeerModeElectorRegistersItselfWithOnlyItsTokensHash) {
  one_leader g;
  ASSERT_TRUE(
      g.run_until([&] { return g.store->peek(registration_key(lock_key, "node-0")).has_value(); }));
  const std::string body = g.store->peek(registration_key(lock_key, "node-0"))->body;
  EXPECT_NE(body.find(R"("id":"node-0","priority":2,"tokenSha256":")"), std::string::npos) << body;
  // A new priority is registered again.
  elector_config next = g.leader().config();
  next.coordination.priority = 9;
  ASSERT_EQ(g.leader().update_config(next), std::nullopt);
  ASSERT_TRUE(g.run_until([&] {
    return g.store->peek(registration_key(lock_key, "node-0"))->body.find(R"("priority":9)") !=
           std::string::npos;
  }));
}

// Whatever replaced a follower's registration (another writer of `KEY.candidates/*`),
// the owner reads it again with its first read of the lock 10 I after the last upkeep, and
// rewrites it, saying so in a warning; an untouched one is only read. (A forged claim of its id
// that moves anything shows in the leader's record at once: elector_peer_test.cpp's
// AFollowerRewritesItsRegistrationWhenTheLeadersRecordShowsItsIdForged.) Here no health server
// answers, so the follower reads the lock every F.
TEST(ElectorCandidates, AnOverwrittenRegistrationIsRewrittenByItsOwnerWithinTenI) {
  auto warnings = std::make_shared<std::vector<std::string>>();
  test::elector_group g(2, [warnings](int i) {
    elector_config config = candidate_config("node-" + std::to_string(i));
    config.log.sink = [warnings](log_level level, std::string_view line) {
      if (level == log_level::warning && line.find("overwritten") != std::string_view::npos) {
        warnings->emplace_back(line);
      }
    };
    return config;
  });
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  g.electors[1]->start();
  const std::string key = registration_key(lock_key, "node-1");
  ASSERT_TRUE(g.run_until([&] { return g.store->peek(key).has_value(); }));
  g.run_for(1s);
  const std::string ours = g.store->peek(key)->body;
  g.store->poke(key, registration_body("node-1", 1000000, forged_token));
  const auto interval = 10 * g.electors[1]->config().infrequent_interval;
  ASSERT_TRUE(g.run_until([&] { return g.store->peek(key)->body == ours; }, interval + 2s))
      << "not rewritten within 10 I = " << interval.count() << " ms";
  // The store holds the rewrite before the elector hears its answer and logs.
  ASSERT_TRUE(g.run_until([&] { return !warnings->empty(); }, 1s));
  EXPECT_NE(warnings->back().find("candidate registration was overwritten by another writer"),
            std::string::npos)
      << warnings->back();
  EXPECT_NE(warnings->back().find(": rewritten"), std::string::npos) << warnings->back();
  // An untouched one is read, never written again.
  const std::string etag = g.store->peek(key)->etag;
  g.run_for(3 * interval);
  EXPECT_EQ(g.store->peek(key)->etag, etag);
}

TEST(ElectorCandidates, OnlyTheRegisteredWatcherIsVerifiedAndAForgerCostsOneReadPerF) {
  auto given_to_core = std::make_shared<std::vector<std::string>>();
  one_leader g(keeping_core_lists(given_to_core));
  // node-1's registration, as its own elector writes it.
  g.store->poke(registration_key(lock_key, "node-1"), registration_body("node-1", 5, member_token));
  const std::uint64_t term = g.leader().status().term;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  const auto ignore = [](boost::system::error_code, health_response) {};
  handler.async_handle(claiming("node-1", 1, member_token, "10.0.0.2", term), ignore);
  handler.async_handle(claiming("node-9", 1000, forged_token, "10.0.0.66", term), ignore);
  handler.async_handle(claiming("node-1", 1000, forged_token, "10.0.0.67", term), ignore);
  ASSERT_TRUE(g.run_until(
      [&] { return find(g.leader().status().candidates, "node-1", true) != nullptr; }, 5s));

  // The forgers keep claiming, a check every 10 ms, for 20 F.
  const std::uint64_t gets_before = g.store->stats().gets;
  for (int n = 0; n < 300; ++n) {
    handler.handle(claiming("node-9", 1000, forged_token, "10.0.0.66"));
    handler.handle(claiming("node-1", 1000, forged_token, "10.0.0.67"));
    g.run_for(10ms);
  }
  const auto f = g.leader().config().frequent_interval;
  const std::uint64_t reads = g.store->stats().gets - gets_before;
  ::testing::Test::RecordProperty("store_gets_in_3s", static_cast<int>(reads));
  EXPECT_LE(reads, 3000ms / f + 1) << "one read per F at most";

  const std::vector<candidate_info> shown = g.leader().status().candidates;
  ASSERT_EQ(shown.size(), 3u);
  const candidate_info* member = find(shown, "node-1", true);
  ASSERT_NE(member, nullptr);
  EXPECT_EQ(member->priority, 5) << "the registered priority, not the claimed one";
  EXPECT_TRUE(member->watching.has_value());
  EXPECT_EQ(shown.front().id, "node-1") << "verified first";
  EXPECT_NE(find(shown, "node-9", false), nullptr);
  EXPECT_NE(find(shown, "node-1", false), nullptr);
  EXPECT_EQ(g.leader().snapshot().candidates, shown);
  EXPECT_TRUE(g.leader().is_leader());
  // What the core decides by: node-1 at its registered priority, never a forged claim.
  ASSERT_FALSE(given_to_core->empty());
  EXPECT_NE(given_to_core->front().find("node-1/5/watching"), std::string::npos)
      << given_to_core->front();
  for (const std::string& line : *given_to_core) {
    EXPECT_EQ(line.find("1000"), std::string::npos) << line;
    EXPECT_EQ(line.find("node-9"), std::string::npos) << line;
  }
}

TEST(ElectorCandidates, AClientCertificateVerifiesWithoutARegistration) {
  one_leader g;
  const std::uint64_t term = g.leader().status().term;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  health_request request = claiming("node-7", 4, member_token, "10.0.0.7", term);
  request.verified_client = true;
  request.client_names = {"node-7"};
  handler.async_handle(request, [](boost::system::error_code, health_response) {});
  ASSERT_TRUE(g.run_until(
      [&] { return find(g.leader().status().candidates, "node-7", true) != nullptr; }, 1s));
  EXPECT_EQ(find(g.leader().status().candidates, "node-7", true)->priority, 4);
}

// A client-only certificate (CN=monitor) claimed node-g's id and node-f handed over to it: a
// certificate now verifies a claim only for an id it names, and node-g has no registration with
// that token, so the claim stays unverified however long it watches.
TEST(ElectorCandidates, ACertificateClaimingAnIdItDoesNotNameStaysUnverified) {
  one_leader g(keeping_core_lists(std::make_shared<std::vector<std::string>>()));
  const std::uint64_t term = g.leader().status().term;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  health_request request = claiming("node-g", 9, forged_token, "10.0.0.7", term);
  request.verified_client = true;
  request.client_names = {"monitor"};
  handler.async_handle(request, [](boost::system::error_code, health_response) {});
  ASSERT_TRUE(g.run_until(
      [&] { return find(g.leader().status().candidates, "node-g", false) != nullptr; }, 1s));
  g.run_for(5 * g.leader().config().frequent_interval);
  EXPECT_EQ(find(g.leader().status().candidates, "node-g", true), nullptr);
  EXPECT_NE(find(g.leader().status().candidates, "node-g", false), nullptr);
}

// A candidate whose watch ends and who never comes back counts as watching for the watch gap
// only. No claim arrives to say that the gap ran out: the elector's own timer must hand the core
// the new list, or a release would name a successor that is gone.
TEST(ElectorCandidates, TheCoreLearnsWhenAVanishedWatchersGapRunsOut) {
  const auto watching_in = [](const std::string& line) {
    return line.find(" node-7/4/watching") != std::string::npos;
  };
  auto given_to_core = std::make_shared<std::vector<std::string>>();
  one_leader g(keeping_core_lists(given_to_core));
  const std::uint64_t term = g.leader().status().term;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  health_request request = claiming("node-7", 4, member_token, "10.0.0.7", term);
  request.verified_client = true;
  request.client_names = {"node-7"};
  boost::asio::cancellation_signal end_watch;
  handler.async_handle(request,
                       boost::asio::bind_cancellation_slot(
                           end_watch.slot(), [](boost::system::error_code, health_response) {}));
  ASSERT_TRUE(g.run_until([&] {
    return !given_to_core->empty() && watching_in(given_to_core->back());
  })) << (given_to_core->empty() ? "none" : given_to_core->back());
  end_watch.emit(boost::asio::cancellation_type::terminal);  // the watcher is gone
  g.run_for(500ms);
  EXPECT_TRUE(watching_in(given_to_core->back()))
      << "within the gap (max(1 s, F/4)) it still counts: " << given_to_core->back();
  g.run_for(1s);
  EXPECT_FALSE(watching_in(given_to_core->back())) << given_to_core->back();
  EXPECT_NE(given_to_core->back().find(" node-7/4 "), std::string::npos) << "still a candidate";
}

// async_resign_to names a verified candidate only: a ghost, or a claim the registration refuted,
// is refused with nothing written; the verified member is named.
TEST(ElectorCandidates, ResignToNamesOnlyAVerifiedCandidate) {
  one_leader g(keeping_core_lists(std::make_shared<std::vector<std::string>>()));
  g.store->poke(registration_key(lock_key, "node-1"), registration_body("node-1", 5, member_token));
  const std::uint64_t term = g.leader().status().term;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  const auto ignore = [](boost::system::error_code, health_response) {};
  handler.async_handle(claiming("node-1", 5, member_token, "10.0.0.2", term), ignore);
  handler.async_handle(claiming("node-9", 1000, forged_token, "10.0.0.66", term), ignore);
  ASSERT_TRUE(g.run_until(
      [&] { return find(g.leader().status().candidates, "node-1", true) != nullptr; }, 5s));
  ASSERT_TRUE(g.run_until(
      [&] { return find(g.leader().status().candidates, "node-9", false) != nullptr; }, 5s));
  for (const std::string name : {"ghost", "node-9"}) {
    std::optional<boost::system::error_code> result;
    g.leader().async_resign_to(name, [&](boost::system::error_code ec) { result = ec; });
    ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
    EXPECT_EQ(*result, errc::unknown_successor) << name;
    EXPECT_TRUE(g.leader().is_leader()) << name;
    EXPECT_FALSE(g.record(lock_key)->released) << name;
  }
  std::optional<boost::system::error_code> result;
  g.leader().async_resign_to("node-1", [&](boost::system::error_code ec) { result = ec; });
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_FALSE(*result) << result->message();
  ASSERT_TRUE(g.record(lock_key)->released);
  EXPECT_EQ(g.record(lock_key)->successor, "node-1");
}

TEST(ElectorCandidates, AStoppedElectorShowsNoCandidates) {
  one_leader g;
  health_handler handler(g.io.get_executor(), g.leader().health_source());
  handler.handle(claiming("node-7", 4, member_token, "10.0.0.7"));
  ASSERT_TRUE(g.run_until([&] { return !g.leader().status().candidates.empty(); }, 1s));
  bool stopped = false;
  g.leader().async_stop([&](boost::system::error_code) { stopped = true; });
  ASSERT_TRUE(g.run_until([&] { return stopped; }));
  EXPECT_TRUE(g.leader().status().candidates.empty());
  EXPECT_TRUE(g.leader().snapshot().candidates.empty());
}

TEST(ElectorCandidates, PeerModeRefusesALockKeyWithNoRoomForRegistrations) {
  elector_config config = candidate_config("node-0");
  config.lock_key = std::string(979, 'k');
  EXPECT_EQ(config.validate(), std::nullopt);
  config.lock_key += 'k';
  const auto problem = config.validate();
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(problem->starts_with("lock_key: at most 979 bytes with peer.enabled")) << *problem;
  config.peer.enabled = false;
  EXPECT_EQ(config.validate(), std::nullopt);
}

}  // namespace
}  // namespace s3lect::detail
