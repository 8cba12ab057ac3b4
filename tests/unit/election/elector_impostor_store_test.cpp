// An impostor store (docs/peer-mode.md#trust-chain): what an on-path attacker does to a store
// reached over plain HTTP. SigV4 signs requests, not answers, so it answers every GET with a
// forged record, renewed like a live leader's, whose leaderAddr and peerKeyPin point at its
// own health endpoint, which says "leading, all well". The store here is in-process and says
// it does not authenticate its answers, as s3_client says of http:// to a non-loopback host
// (these tests may only reach 127.0.0.1, which s3_client counts as authenticated).
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/record.hpp>
#include <s3lect/storage.hpp>
#include <s3lect/tls.hpp>

#include "support/elector_group.hpp"
#include "support/fake_leadership_source.hpp"
#include "support/test_certificates.hpp"

#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <cstdio>

namespace s3lect::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr std::uint64_t forged_term = 7;

/// Answers every GET with `forge()`'s record under a new ETag, and refuses every PUT (412),
/// as an attacker that wants followers to wait for ever would. Counts the reads of the lock
/// itself: the follower also reads (and fails to write) its candidate registration.
class impostor_store final : public storage {
 public:
  impostor_store(executor_type executor, std::function<lock_record()> forge)
      : executor_(std::move(executor)), forge_(std::move(forge)) {}
  executor_type get_executor() const override { return executor_; }
  bool answers_authenticated() const noexcept override { return false; }

 protected:
  void get_impl(std::string key, asio::any_completion_handler<get_signature> handler) override {
    if (key == "group/leader.json") ++lock_reads;
    get_result result;
    result.found = object{encode_record(forge_()), "forged-" + std::to_string(++answers_)};
    asio::post(executor_, [handler = std::move(handler), result = std::move(result)]() mutable {
      std::move(handler)(boost::system::error_code{}, std::move(result));
    });
  }
  void put_impl(std::string, std::string, put_condition,
                asio::any_completion_handler<put_signature> handler) override {
    asio::post(executor_, [handler = std::move(handler)]() mutable {
      std::move(handler)(make_error_code(errc::precondition_failed), put_result{});
    });
  }

 public:
  unsigned lock_reads = 0;

 private:
  executor_type executor_;
  std::function<lock_record()> forge_;
  std::uint64_t answers_ = 0;
};

/// The attacker: a zero-configuration health endpoint that leads in the forged term, and the
/// record that pins followers to it.
struct impostor : elector_io {
  impostor() : elector_io(time::real), source(io.get_executor()) {
    health_server_config config;
    config.bind_address = "127.0.0.1:0";
    pin = adopt_self_signed_identity(config.tls);
    server = std::make_unique<health_server>(io.get_executor(), source, config);
    if (const auto ec = server->start()) throw boost::system::system_error(ec);
    source.set_leader(forged_term, encode_record(forge()), 10s, "real-leader");
  }
  ~impostor() { server.reset(); }

  lock_record forge() {
    lock_record record;
    record.leader_id = "real-leader";
    record.leader_addr = "127.0.0.1:" + std::to_string(server->local_endpoint().port());
    record.key_pin = pin;
    record.term = forged_term;
    record.lease = 1500ms;
    record.last_updated = std::chrono::system_clock::now();
    char nonce[17];
    std::snprintf(nonce, sizeof nonce, "%016llx", static_cast<unsigned long long>(++writes));
    record.nonce = nonce;
    return record;
  }

  fake_leadership_source source;
  std::unique_ptr<health_server> server;
  std::string pin;
  unsigned writes = 0;
};

elector_config follower_config() {
  elector_config config;
  config.lock_key = "group/leader.json";
  config.server_id = "follower";
  use_short_timing(config);
  config.peer.enabled = true;
  config.peer.timeout = 500ms;
  return config;
}

TEST(ImpostorStore, ZeroConfigurationPeerModeIsRefusedOverAStoreThatDoesNotAuthenticate) {
  impostor attacker;
  impostor_store store(attacker.io.get_executor(), [&] { return attacker.forge(); });
  try {
    elector follower(attacker.io.get_executor(), store, follower_config());
    FAIL() << "the elector accepted zero-configuration peer mode over an unauthenticated store";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_config));
    EXPECT_NE(std::string(e.what()).find("not authenticated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trust_unauthenticated_store"), std::string::npos);
  }
  // Validation says the same before any elector exists.
  EXPECT_TRUE(follower_config().validate(store));
  EXPECT_FALSE(follower_config().validate());
}

struct followed {
  elector_counters counters;
  unsigned lock_reads = 0;  ///< GETs of the lock key (not of the registration)
};

/// Runs a follower over the impostor's store for a while; its counters.
followed follow_the_impostor(const elector_config& config) {
  impostor attacker;
  impostor_store store(attacker.io.get_executor(), [&] { return attacker.forge(); });
  elector follower(attacker.io.get_executor(), store, config);
  follower.start();
  attacker.run_for(1500ms);
  return {follower.counters(), store.lock_reads};
}

TEST(ImpostorStore, DeclaredTrustedTheForgedPinHoldsTheFollowerOffTheStore) {
  // What the option risks: the follower believes the impostor and stops reading the store.
  elector_config config = follower_config();
  config.peer.trust_unauthenticated_store = true;
  const followed seen = follow_the_impostor(config);
  EXPECT_GT(seen.counters.peer_check.ok, 0u) << "the impostor's endpoint was trusted by its pin";
  EXPECT_LT(seen.lock_reads, 6u) << "two reads to settle, then the impostor's word";
}

TEST(ImpostorStore, InCaModeTheFollowerIgnoresTheForgedPinAndKeepsReadingTheStore) {
  static const test_pki pki = make_test_pki("impostor test CA");
  elector_config config = follower_config();
  config.peer.tls.ca_pem = pki.ca.certificate;
  const followed seen = follow_the_impostor(config);
  EXPECT_EQ(seen.counters.peer_check.ok, 0u)
      << "the impostor's self-signed certificate was trusted";
  EXPECT_GT(seen.counters.peer_check.failed, 0u);
  EXPECT_GE(seen.lock_reads, 6u) << "the failed checks send the follower back to the store";
}

}  // namespace
}  // namespace s3lect::test
