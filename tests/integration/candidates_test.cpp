// Candidates against the local radosgw (docs/peer-mode.md#claims-that-cannot-be-forged): two
// peer-mode electors write their registration objects, the follower's real watches over TLS are
// verified by the leader from the bucket, and a forged watcher claiming priority 1000 with a
// random token is shown but never verified.
#include "support/local_s3_test.hpp"
#include "support/peer_watch_config.hpp"
#include "support/test_certificates.hpp"

#include "candidate_registration.hpp"
#include "peer_client.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/health.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

class CandidatesOnLocalStore : public test::local_s3_test {
 protected:
  void SetUp() override {
    local_s3_test::SetUp();
    if (HasFatalFailure()) return;
    s3_config config = s3.config(false);
    config.request_timeout = 2s;
    client = std::make_unique<s3_client>(io.get_executor(), config);
    key = "integration/candidates-" + test::unique_suffix() + "/leader.json";
  }

  elector_config node(int index, int priority) const {
    return test::peer_watch_config(key, "node-" + std::to_string(index), 6s, pki.ca.certificate,
                                   priority);
  }

  bool run_until(const std::function<bool()>& done, steady::duration limit = 30s) {
    const auto deadline = steady::now() + limit;
    io.restart();
    while (!done() && steady::now() < deadline) io.run_one_for(10ms);
    return done();
  }

  /// The object at `at`, read through the store; nullopt when absent.
  std::optional<std::string> read(const std::string& at) {
    std::optional<std::string> body;
    bool done = false;
    client->async_get(at, [&](boost::system::error_code ec, get_result result) {
      EXPECT_FALSE(ec) << ec.message();
      if (result.found) body = result.found->body;
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }));
    return body;
  }

  const test::test_pki pki = test::make_test_pki("s3lect candidates integration CA");
  boost::asio::io_context io;
  std::unique_ptr<s3_client> client;
  std::string key;
};

/// A copy, not a pointer: status() returns its list by value, and a pointer into it would dangle
/// once the statement ends.
std::optional<candidate_info> find(const std::vector<candidate_info>& list, const std::string& id) {
  for (const candidate_info& c : list) {
    if (c.id == id) return c;
  }
  return std::nullopt;
}

TEST_F(CandidatesOnLocalStore, RegisteredWatchersAreVerifiedAndAForgedOneIsNot) {
  elector leader(io.get_executor(), *client, node(0, 3));
  health_server_config server_config;
  server_config.bind_address = "127.0.0.1:0";
  server_config.tls.certificate_pem = pki.server.certificate;
  server_config.tls.private_key_pem = pki.server.private_key;
  health_server server(io.get_executor(), leader.health_source(), server_config);
  ASSERT_FALSE(server.start());
  const std::string address = "127.0.0.1:" + std::to_string(server.local_endpoint().port());
  elector_config with_address = leader.config();
  with_address.server_address = address;
  ASSERT_EQ(leader.update_config(with_address), std::nullopt);
  leader.start();
  ASSERT_TRUE(run_until([&] { return leader.is_leader(); }, 60s));

  elector follower(io.get_executor(), *client, node(1, 2));
  follower.start();
  // The forger reaches the endpoint like any follower, but has no registration.
  detail::peer_client_config forged;
  forged.tls.ca_pem = pki.ca.certificate;
  forged.claim = detail::candidate_claim_params{"node-9", 1000, "0123456789abcdef0123456789abcdef"};
  detail::peer_client forger(io.get_executor(), forged);
  const detail::peer_watch watch{20s, leader.status().term, std::nullopt};
  forger.async_check(address, watch, [](boost::system::error_code, detail::peer_answer) {});

  ASSERT_TRUE(run_until([&] {
    const std::optional<candidate_info> member = find(leader.status().candidates, "node-1");
    return member && member->verified && find(leader.status().candidates, "node-9");
  })) << "node-1 never verified";
  const std::optional<candidate_info> member = find(leader.status().candidates, "node-1");
  ASSERT_TRUE(member);
  EXPECT_EQ(member->priority, 2);
  EXPECT_TRUE(member->watching.has_value());

  // Both electors registered, with only their tokens' hashes.
  for (const char* id : {"node-0", "node-1"}) {
    const auto body = read(detail::registration_key(key, id));
    ASSERT_TRUE(body.has_value()) << id;
    EXPECT_NE(body->find("\"tokenSha256\":\""), std::string::npos) << *body;
  }
  EXPECT_FALSE(read(detail::registration_key(key, "node-9")).has_value());

  // Several verification budgets later the forger is still unverified, and leadership stayed.
  const std::uint64_t term = leader.status().term;
  run_until([] { return false; }, 3s);
  const std::optional<candidate_info> forger_seen = find(leader.status().candidates, "node-9");
  ASSERT_TRUE(forger_seen);
  EXPECT_FALSE(forger_seen->verified);
  EXPECT_EQ(forger_seen->priority, 1000);
  EXPECT_TRUE(leader.is_leader());
  EXPECT_EQ(leader.status().term, term);

  bool stopped = false;
  follower.async_stop([&](boost::system::error_code) {
    leader.async_stop([&](boost::system::error_code) { stopped = true; });
  });
  forger.close();
  EXPECT_TRUE(run_until([&] { return stopped; }));
}

}  // namespace
}  // namespace s3lect
