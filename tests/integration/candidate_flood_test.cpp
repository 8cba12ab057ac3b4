// A claim flood against the local radosgw (s3lect issue 35; docs/peer-mode.md#claims-that-
// cannot-be-forged): while an unauthenticated client sends the leader a forged claim of priority
// 1 000 000 with a FRESH token every 0.9 s from 127.0.0.1, a registered priority-5 follower must
// still be verified and take leadership by preemption, and the leader must still read at most one
// registration per F. Three peer-watch electors, lease 4 s, the other timings derived from it.
//
// The bound: F = 4 s x 5/15 = 1333 ms and the settle time is the lease (docs/coordination.md
// #preemption). The newcomer needs about 2 F of S3 reads before it watches, its registration
// read within 2 F of the first claim (one read per F, and a read already in flight ahead of
// it), the settle time of unbroken watching, up to F for the leader's core to act on it and F
// for the handover: settle + 6 F = 12 s.
#include "support/counting_storage.hpp"
#include "support/local_s3_test.hpp"
#include "support/peer_watch_config.hpp"
#include "support/test_certificates.hpp"

#include "candidate_registration.hpp"
#include "peer_client.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/health.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
namespace asio = boost::asio;

constexpr std::chrono::milliseconds lease = 4s;
constexpr int forged_priority = 1'000'000;

std::string fresh_token() {
  static std::random_device device;
  static const char digits[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) token += digits[device() % 16];
  return token;
}

/// Every `interval`, one check to each endpoint, each from a new peer client (a client's claim
/// is fixed at construction) claiming `forger-<tick>` at priority 1 000 000 with a fresh token.
class claim_flood {
 public:
  claim_flood(asio::io_context& io, std::string ca_pem, std::vector<std::string> endpoints)
      : io_(io), ca_pem_(std::move(ca_pem)), endpoints_(std::move(endpoints)), timer_(io) {}

  void start() {
    next_ = steady::now();
    tick();
  }
  void stop() {
    stopped_ = true;
    timer_.cancel();
    for (auto& client : clients_) client->close();
  }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t answered() const { return answered_; }

 private:
  void tick() {
    if (stopped_) return;
    ++ticks_;
    for (const std::string& endpoint : endpoints_) {
      detail::peer_client_config config;
      config.tls.ca_pem = ca_pem_;
      config.claim = detail::candidate_claim_params{"forger-" + std::to_string(ticks_),
                                                    forged_priority, fresh_token()};
      clients_.push_back(std::make_unique<detail::peer_client>(io_.get_executor(), config));
      ++sent_;
      clients_.back()->async_check(endpoint, std::nullopt,
                                   [this](boost::system::error_code ec, detail::peer_answer) {
                                     if (!ec) ++answered_;
                                   });
    }
    // A client lives for 10 ticks, long past its check's timeout.
    while (clients_.size() > 10 * endpoints_.size()) clients_.pop_front();
    next_ += 900ms;
    timer_.expires_at(next_);
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) tick();
    });
  }

  asio::io_context& io_;
  const std::string ca_pem_;
  const std::vector<std::string> endpoints_;
  asio::steady_timer timer_;
  std::list<std::unique_ptr<detail::peer_client>> clients_;
  steady::time_point next_{};
  std::uint64_t ticks_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t answered_ = 0;
  bool stopped_ = false;
};

class CandidateFlood : public test::local_s3_test {
 protected:
  void SetUp() override {
    local_s3_test::SetUp();
    if (HasFatalFailure()) return;
    s3_config config = s3.config(false);
    config.request_timeout = 2s;
    client = std::make_unique<s3_client>(io.get_executor(), config);
    key = "integration/candidate-flood-" + test::unique_suffix() + "/leader.json";
  }

  bool run_until(const std::function<bool()>& done, steady::duration limit) {
    const auto deadline = steady::now() + limit;
    io.restart();
    while (!done() && steady::now() < deadline) io.run_one_for(10ms);
    return done();
  }

  const test::test_pki pki = test::make_test_pki("s3lect candidate flood CA");
  asio::io_context io;
  std::unique_ptr<s3_client> client;
  std::string key;
};

/// One peer-watch elector on a counting storage, with a health server of its own.
struct node {
  node(asio::io_context& io, s3_client& store, const test::test_pki& pki, const std::string& key,
       int index, int priority)
      : id("node-" + std::to_string(index)),
        counted(store, key, detail::registration_key(key, id)),
        elector_(io.get_executor(), counted,
                 test::peer_watch_config(key, id, lease, pki.ca.certificate, priority)),
        server(io.get_executor(), elector_.health_source(), server_config(pki)) {}

  static health_server_config server_config(const test::test_pki& pki) {
    health_server_config config;
    config.bind_address = "127.0.0.1:0";
    config.tls.certificate_pem = pki.server.certificate;
    config.tls.private_key_pem = pki.server.private_key;
    return config;
  }

  /// Listens, and advertises where; false when it cannot listen.
  bool listen() {
    if (server.start()) return false;
    address = "127.0.0.1:" + std::to_string(server.local_endpoint().port());
    elector_config with_address = elector_.config();
    with_address.server_address = address;
    return !elector_.update_config(with_address).has_value();
  }

  std::string id;
  test::counting_storage counted;
  elector elector_;
  health_server server;
  std::string address;
};

bool forged_verified(const std::vector<candidate_info>& list) {
  for (const candidate_info& c : list) {
    if (c.id.starts_with("forger-") && c.verified) return true;
  }
  return false;
}

TEST_F(CandidateFlood, ARegisteredCandidatePreemptsDespiteAFreshTokenFlood) {
  std::array<std::unique_ptr<node>, 3> nodes;
  const std::array<int, 3> priorities{0, 0, 5};
  std::vector<std::string> endpoints;
  for (int i = 0; i < 3; ++i) {
    nodes[i] = std::make_unique<node>(io, *client, pki, key, i, priorities[i]);
    ASSERT_TRUE(nodes[i]->listen()) << nodes[i]->id;
    endpoints.push_back(nodes[i]->address);
  }
  elector& leader = nodes[0]->elector_;
  elector& best = nodes[2]->elector_;
  const elector_config timing = leader.config();
  const auto frequent = timing.frequent_interval;
  ASSERT_EQ(frequent, 1333ms);
  ASSERT_EQ(timing.settle_time(), lease);
  const auto bound = timing.settle_time() + 6 * frequent;

  leader.start();
  ASSERT_TRUE(run_until([&] { return leader.is_leader(); }, 60s));
  const std::uint64_t first_term = leader.status().term;

  claim_flood flood(io, pki.ca.certificate, endpoints);
  flood.start();
  ASSERT_TRUE(run_until([&] { return flood.answered() >= 2; }, 10s)) << "the flood never arrived";
  nodes[1]->elector_.start();
  best.start();
  const auto started = steady::now();
  std::optional<steady::duration> verified_after;
  bool forger_verified = false;
  const bool took_over = run_until(
      [&] {
        const leadership_status status = leader.status();
        forger_verified = forger_verified || forged_verified(status.candidates);
        for (const candidate_info& c : status.candidates) {
          if (c.id == "node-2" && c.verified && !verified_after) {
            verified_after = steady::now() - started;
          }
        }
        return best.is_leader();
      },
      30s);
  const auto took = steady::now() - started;
  const auto ms = [](steady::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
  };
  // The leader read at most one registration per F, flood or not (a little slack for timers).
  const auto reads = nodes[0]->counted.registration_reads();
  ASSERT_FALSE(reads.empty());
  for (std::size_t i = 1; i < reads.size(); ++i) {
    EXPECT_GE(reads[i] - reads[i - 1], frequent - 20ms)
        << "registration reads " << i - 1 << " and " << i << " only " << ms(reads[i] - reads[i - 1])
        << " apart";
  }

  ASSERT_TRUE(took_over) << "node-2 (priority 5) never led within 30 s of its start; verified "
                         << (verified_after ? "after " + ms(*verified_after) : "never")
                         << "; the flood sent " << flood.sent() << " claims";
  EXPECT_LE(took, bound) << "took " << ms(took) << ", bound " << ms(bound);
  std::cout << "node-2 verified after " << (verified_after ? ms(*verified_after) : "?")
            << ", led after " << ms(took) << " (bound " << ms(bound) << "); " << flood.sent()
            << " forged claims sent\n";
  // By preemption: node-0 handed over while it still ran and renewed, not by expiry.
  EXPECT_FALSE(forger_verified);
  EXPECT_TRUE(leader.status().running);
  EXPECT_FALSE(leader.is_leader());
  EXPECT_EQ(leader.counters().demotions, 0u);
  EXPECT_GT(best.status().term, first_term);

  flood.stop();
  int stopped = 0;
  for (auto& n : nodes) n->elector_.async_stop([&](boost::system::error_code) { ++stopped; });
  EXPECT_TRUE(run_until([&] { return stopped == 3; }, 30s));
}

}  // namespace
}  // namespace s3lect
