// leader_endpoint_client, the public way to watch a leader's health endpoint, against a real
// health_server with a self-signed certificate: a watch ends when the leader steps down or its
// time passes, a certificate without the pin is refused, and a cancelled watch leaves the client
// usable.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/leader_endpoint.hpp>
#include <s3lect/tls.hpp>

#include "support/fake_leadership_source.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <memory>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

class LeaderEndpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    source.set_leader(
        42,
        R"({"leaderID":"node-a","leaderAddr":"127.0.0.1:8443","lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11"})");
    health_server_config config;
    config.bind_address = "127.0.0.1:0";
    config.tls.certificate_pem = identity.certificate_pem;
    config.tls.private_key_pem = identity.private_key_pem;
    server = std::make_unique<health_server>(io.get_executor(), source, std::move(config));
    ASSERT_FALSE(server->start());
    address = "127.0.0.1:" + std::to_string(server->local_endpoint().port());
  }

  /// Runs one watch of term 42 for `duration`, trusting the certificate with `pin`.
  std::pair<error_code, leader_endpoint_answer> watch(const std::string& pin,
                                                      std::chrono::milliseconds duration) {
    return test::run_until_complete<leader_endpoint_answer>(
        io, [&](auto handler) { client.async_watch(address, pin, 42, duration, handler); });
  }

  asio::io_context io;
  test::fake_leadership_source source{io.get_executor()};
  const self_signed_identity identity = make_self_signed_identity();
  std::unique_ptr<health_server> server;
  std::string address;
  leader_endpoint_client client{io.get_executor(), leader_endpoint_config{}};
};

TEST_F(LeaderEndpoint, AWatchEndsWhenTheLeaderStepsDown) {
  asio::post(io, [this] { source.set_follower("node-b", 43); });
  const auto [error, answer] = watch(identity.key_pin, 30s);
  ASSERT_FALSE(error) << error.message();
  EXPECT_FALSE(answer.leads);
  EXPECT_EQ(answer.end, leader_watch_end::changed);
  EXPECT_EQ(answer.leader_id, "node-b");
  EXPECT_EQ(answer.term, 43u);
}

TEST_F(LeaderEndpoint, AWatchOfAStableLeaderEndsWhenItsTimePasses) {
  const auto [error, answer] = watch(identity.key_pin, 50ms);
  ASSERT_FALSE(error) << error.message();
  EXPECT_TRUE(answer.leads);
  EXPECT_EQ(answer.end, leader_watch_end::timeout);
  EXPECT_EQ(answer.leader_id, "node-a");
  EXPECT_EQ(answer.term, 42u);
}

TEST_F(LeaderEndpoint, OnlyTheCertificateWithThePinIsTrusted) {
  EXPECT_EQ(watch(make_self_signed_identity().key_pin, 50ms).first, errc::tls_verification_failed);
  // No pin: the configured CAs (here the system's), which know no self-signed certificate.
  EXPECT_EQ(watch("", 50ms).first, errc::tls_verification_failed);
}

TEST_F(LeaderEndpoint, ACancelledWatchLeavesTheClientUsable) {
  asio::cancellation_signal cancel;
  const auto cancelled = test::run_until_complete<leader_endpoint_answer>(io, [&](auto handler) {
    client.async_watch(address, identity.key_pin, 42, 30s,
                       asio::bind_cancellation_slot(cancel.slot(), handler));
    asio::post(io, [&] { cancel.emit(asio::cancellation_type::terminal); });
  });
  EXPECT_EQ(cancelled.first, asio::error::operation_aborted);
  const auto [error, answer] = watch(identity.key_pin, 50ms);
  EXPECT_FALSE(error) << error.message();
  EXPECT_EQ(answer.end, leader_watch_end::timeout);
}

/// The message of the invalid_config error constructing a client with `config` throws.
std::string construction_error(asio::io_context& io, const leader_endpoint_config& config) {
  try {
    leader_endpoint_client refused(io.get_executor(), config);
  } catch (const boost::system::system_error& error) {
    EXPECT_EQ(error.code(), errc::invalid_config);
    return error.what();
  }
  return "accepted";
}

TEST_F(LeaderEndpoint, ABadConfigurationIsRefusedNamingTheField) {
  leader_endpoint_config config;
  config.tls.verify_peer = false;
  EXPECT_TRUE(config.validate());
  EXPECT_TRUE(construction_error(io, config).starts_with("leader_endpoint_config.tls.verify_peer"))
      << construction_error(io, config);
  config = leader_endpoint_config{};
  config.tls.ca_file = "/nonexistent/ca.pem";
  const std::string unreadable = construction_error(io, config);
  EXPECT_TRUE(
      unreadable.starts_with("leader_endpoint_config.tls.ca_file: cannot load "
                             "'/nonexistent/ca.pem'"))
      << unreadable;
  EXPECT_EQ(unreadable.find("peer_client_config"), std::string::npos) << unreadable;
}

}  // namespace
}  // namespace s3lect
