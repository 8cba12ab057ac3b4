// The health server against one hostile address (docs/peer-mode.md#a-hostile-client): from
// 127.0.0.2, TLS connections that complete the handshake and then say nothing, and plain TCP
// connections that never start one; from 127.0.0.1, a follower's probes. Linux loopback answers
// the whole of 127/8, so the server sees two source addresses. Short deadlines keep it fast.
// Then watch slots (docs/peer-mode.md#watch-slots): 127.0.0.2 and 127.0.0.3 ask for every watch
// their connections allow, and a follower from 127.0.0.1 still gets one held.
#include <s3lect/health.hpp>

#include "support/background_io.hpp"
#include "support/fake_leadership_source.hpp"
#include "support/test_certificates.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;

const s3lect::test::test_pki& pki() {
  static const s3lect::test::test_pki shared = s3lect::test::make_test_pki();
  return shared;
}

/// A blocking TCP connection from `source` whose reads give up after 10 s.
void connect_from(tcp::socket& socket, const char* source, const tcp::endpoint& server) {
  socket.open(tcp::v4());
  socket.bind({asio::ip::make_address(source), 0});
  socket.connect(server);
  timeval timeout{10, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
}

/// True when the server closed the connection; false when the read gave up waiting (the
/// server kept it open) or data came.
bool closed_by_server(error_code ec) {
  return ec == asio::error::eof || ec == ssl::error::stream_truncated ||
         ec == asio::error::connection_reset;
}

/// Waits for the server to close a plain connection without sending anything.
bool closed_silently(tcp::socket& socket) {
  char byte = 0;
  error_code ec;
  return socket.read_some(asio::buffer(&byte, 1), ec) == 0 && closed_by_server(ec);
}

/// A TLS client verifying the server against the test CA.
struct tls_connection {
  tls_connection(ssl::context& context, const char* source, const tcp::endpoint& server)
      : stream(io, context) {
    connect_from(stream.next_layer(), source, server);
    stream.handshake(ssl::stream_base::client, handshake_ec);
  }

  /// Waits for the server to close the connection without sending anything. A refused
  /// connection failed its handshake already (reading on then is not allowed).
  bool closed_silently() {
    if (handshake_ec) return closed_by_server(handshake_ec);
    char byte = 0;
    error_code ec;
    const std::size_t got = stream.read_some(asio::buffer(&byte, 1), ec);
    return got == 0 && closed_by_server(ec);
  }

  asio::io_context io;
  ssl::stream<tcp::socket> stream;
  error_code handshake_ec;
};

/// A watch request on its own TLS connection, its answer read asynchronously to the end.
struct pending_watch {
  pending_watch(asio::io_context& io, ssl::context& context, const char* source,
                const tcp::endpoint& server, const std::string& query)
      : stream(io, context) {
    connect_from(stream.next_layer(), source, server);
    stream.handshake(ssl::stream_base::client, handshake_ec);
    if (handshake_ec) return;
    request =
        "GET /health/leadership?" + query + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    asio::async_write(stream, asio::buffer(request), [](error_code, std::size_t) {});
    asio::async_read(stream, asio::dynamic_buffer(answer),
                     [this](error_code, std::size_t) { done = true; });
  }

  /// The X-S3lect-Watch header of the answer.
  std::string outcome() const {
    const std::string name = "X-S3lect-Watch: ";
    const auto at = answer.find(name);
    if (at == std::string::npos) return "<none>";
    return answer.substr(at + name.size(), answer.find("\r\n", at) - at - name.size());
  }

  ssl::stream<tcp::socket> stream;
  error_code handshake_ec;
  std::string request;
  std::string answer;
  bool done = false;
};

/// Runs `io` until `count` of `watches` are answered, or 10 s pass.
std::size_t run_until_answered(asio::io_context& io,
                               const std::vector<std::unique_ptr<pending_watch>>& watches,
                               std::size_t count) {
  const auto answered = [&watches] {
    std::size_t n = 0;
    for (const auto& watch : watches) n += watch->done ? 1 : 0;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (answered() < count && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(100ms);
  }
  return answered();
}

class HostileClients : public ::testing::Test {
 protected:
  HostileClients() {
    client_tls.add_certificate_authority(asio::buffer(pki().ca.certificate));
    client_tls.set_verify_mode(ssl::verify_peer);
    source.set_leader(7, R"({"term":7})");
  }

  void start(s3lect::health_server_config config) {
    config.bind_address = "127.0.0.1:0";
    config.tls.certificate_pem = pki().server.certificate;
    config.tls.private_key_pem = pki().server.private_key;
    server = std::make_unique<s3lect::health_server>(runner.io.get_executor(), source, config);
    ASSERT_FALSE(server->start());
    endpoint = server->local_endpoint();
  }

  /// A follower's probe from 127.0.0.1: its whole answer.
  std::string probe() {
    tls_connection follower(client_tls, "127.0.0.1", endpoint);
    EXPECT_FALSE(follower.handshake_ec) << follower.handshake_ec.message();
    const std::string request =
        "GET /health/leadership HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    asio::write(follower.stream, asio::buffer(request));
    std::string answer;
    error_code ec;
    asio::read(follower.stream, asio::dynamic_buffer(answer), ec);
    return answer;
  }

  /// Stops the server: once done, every connection's end is counted.
  void stop() {
    auto done = server->async_stop(asio::use_future);
    ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  }

  s3lect::test::background_io runner;
  s3lect::test::fake_leadership_source source{runner.io.get_executor()};
  ssl::context client_tls{ssl::context::tls_client};
  std::unique_ptr<s3lect::health_server> server;
  tcp::endpoint endpoint;
};

TEST_F(HostileClients, SilentTlsAndTcpConnectionsFromOneAddressLeaveProbesAnswered) {
  s3lect::health_server_config config;
  config.first_request_timeout = 500ms;
  config.max_connections = 16;
  config.max_connections_per_source = 8;
  start(config);

  // Twelve TLS connections that handshake and say nothing: eight are held, four refused.
  std::vector<std::unique_ptr<tls_connection>> silent_tls;
  int handshakes = 0;
  for (int i = 0; i < 12; ++i) {
    silent_tls.push_back(std::make_unique<tls_connection>(client_tls, "127.0.0.2", endpoint));
    if (!silent_tls.back()->handshake_ec) ++handshakes;
  }
  EXPECT_EQ(handshakes, 8);
  // Plain TCP connections that never start a handshake: the address has no slot left.
  asio::io_context tcp_io;
  std::vector<std::unique_ptr<tcp::socket>> silent_tcp;
  for (int i = 0; i < 6; ++i) {
    silent_tcp.push_back(std::make_unique<tcp::socket>(tcp_io));
    connect_from(*silent_tcp.back(), "127.0.0.2", endpoint);
  }

  // While they are held, a follower's probes are answered.
  for (int i = 0; i < 5; ++i) {
    const std::string answer = probe();
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  }
  // Every silent connection is closed by the server, the held ones at the first-request
  // deadline, long before the 90 s idle timeout (the reads would give up after 10 s).
  for (auto& connection : silent_tls) EXPECT_TRUE(connection->closed_silently());
  for (auto& socket : silent_tcp) {
    EXPECT_TRUE(closed_silently(*socket));
  }

  stop();
  const s3lect::health_server_stats stats = server->stats();
  EXPECT_EQ(stats.accepted_connections, 12u + 6u + 5u);
  EXPECT_EQ(stats.refused_per_source, 4u + 6u);
  EXPECT_EQ(stats.refused_max_connections, 0u);
  EXPECT_EQ(stats.first_request_timeouts, 8u);
  EXPECT_EQ(stats.failed_handshakes, 0u);
  EXPECT_EQ(stats.requests, 5u);
}

TEST_F(HostileClients, PlainTcpThatNeverHandshakesIsClosedByTheFirstRequestDeadline) {
  s3lect::health_server_config config;
  config.first_request_timeout = 300ms;
  config.max_connections_per_source = 4;
  start(config);
  asio::io_context tcp_io;
  std::vector<std::unique_ptr<tcp::socket>> silent;
  for (int i = 0; i < 4; ++i) {
    silent.push_back(std::make_unique<tcp::socket>(tcp_io));
    connect_from(*silent.back(), "127.0.0.2", endpoint);
  }
  EXPECT_EQ(probe().rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  for (auto& socket : silent) {
    EXPECT_TRUE(closed_silently(*socket));
  }
  stop();
  const s3lect::health_server_stats stats = server->stats();
  EXPECT_EQ(stats.first_request_timeouts, 4u);
  EXPECT_EQ(stats.failed_handshakes, 4u) << "a handshake cut off by the deadline failed";
  EXPECT_EQ(stats.rejected_connections, 0u);
  EXPECT_EQ(stats.requests, 1u);
}

// Issue 28: with 32 connections per source and 64 watches in all, two addresses held every
// watch and a new follower's was refused. Now each anonymous source holds at most 8.
TEST_F(HostileClients, TwoAddressesAtTheirLimitLeaveAFollowersWatchHeld) {
  start(s3lect::health_server_config{});
  asio::io_context io;
  std::vector<std::unique_ptr<pending_watch>> attack;
  for (const char* attacker : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < 32; ++i) {
      attack.push_back(std::make_unique<pending_watch>(io, client_tls, attacker, endpoint,
                                                       "watch=60000&term=7"));
      ASSERT_FALSE(attack.back()->handshake_ec) << attack.back()->handshake_ec.message();
    }
  }
  ASSERT_EQ(run_until_answered(io, attack, 48), 48u) << "8 held per address, 24 refused each";
  for (const auto& watch : attack) {
    if (watch->done) {
      EXPECT_EQ(watch->outcome(), "refused") << watch->answer;
    }
  }
  EXPECT_EQ(server->stats().active_watches, 16u);

  // Held, a 300 ms watch ends with `timeout`; refused, it would be answered at once.
  std::vector<std::unique_ptr<pending_watch>> follower;
  follower.push_back(
      std::make_unique<pending_watch>(io, client_tls, "127.0.0.1", endpoint, "watch=300&term=7"));
  ASSERT_EQ(run_until_answered(io, follower, 1), 1u);
  EXPECT_EQ(follower.front()->outcome(), "timeout") << follower.front()->answer;
  attack.clear();  // closed, so that the stop does not wait for their TLS close
  follower.clear();
  stop();
}

// A client with a certificate the server's CA verified takes the oldest anonymous slot.
TEST_F(HostileClients, AVerifiedClientsWatchTakesAnAnonymousSlot) {
  s3lect::health_server_config config;
  config.tls.ca_pem = pki().ca.certificate;
  config.handler.max_watchers = 4;
  start(config);
  asio::io_context io;
  std::vector<std::unique_ptr<pending_watch>> anonymous;
  for (int i = 0; i < 4; ++i) {
    anonymous.push_back(std::make_unique<pending_watch>(io, client_tls, "127.0.0.2", endpoint,
                                                        "watch=60000&term=7"));
  }
  ssl::context verified_tls{ssl::context::tls_client};
  verified_tls.add_certificate_authority(asio::buffer(pki().ca.certificate));
  verified_tls.set_verify_mode(ssl::verify_peer);
  verified_tls.use_certificate_chain(asio::buffer(pki().client.certificate));
  verified_tls.use_private_key(asio::buffer(pki().client.private_key), ssl::context::pem);
  // Once the four are held (a fifth from their address is refused at once: it holds its share),
  // the verified one comes.
  std::vector<std::unique_ptr<pending_watch>> fifth;
  fifth.push_back(
      std::make_unique<pending_watch>(io, client_tls, "127.0.0.2", endpoint, "watch=60000&term=7"));
  ASSERT_EQ(run_until_answered(io, fifth, 1), 1u);
  EXPECT_EQ(fifth.front()->outcome(), "refused");
  std::vector<std::unique_ptr<pending_watch>> verified;
  verified.push_back(
      std::make_unique<pending_watch>(io, verified_tls, "127.0.0.1", endpoint, "watch=300&term=7"));
  ASSERT_EQ(run_until_answered(io, anonymous, 1), 1u) << "an anonymous watch gave its slot up";
  for (const auto& watch : anonymous) {
    if (watch->done) {
      EXPECT_EQ(watch->outcome(), "refused");
    }
  }
  ASSERT_EQ(run_until_answered(io, verified, 1), 1u);
  EXPECT_EQ(verified.front()->outcome(), "timeout") << verified.front()->answer;
  for (auto* closing : {&anonymous, &fifth, &verified}) closing->clear();
  stop();
}

}  // namespace
