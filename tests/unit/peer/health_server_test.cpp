// health_server over real TLS on 127.0.0.1 (ephemeral ports), with a small Beast client.
// The one Beast + SSL translation unit of the health tests; it also covers beast_handler.hpp.
#include <s3lect/beast_handler.hpp>
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>

#include "support/fake_leadership_source.hpp"
#include "support/temporary_file.hpp"
#include "support/test_certificates.hpp"

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using test::temporary_file;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using test::fake_leadership_source;
using test::other_test_pki;
using test::pem_pair;
using test::shared_test_pki;
using test::test_pki;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
const std::string path = "/health/leadership";
const std::string record =
    R"({"leaderID":"node-a","leaderAddr":"127.0.0.1:8443","lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,"nonce":"9f1c2a7e5b3d4c11"})";

using response_type = http::response<http::string_body>;

struct reply {
  error_code ec;
  response_type response;
};

/// A TLS client verifying the server against `ca_pem` for 127.0.0.1, optionally presenting a
/// client certificate. Every operation is bounded so a broken server cannot hang the test.
class tls_client {
 public:
  tls_client(asio::any_io_executor executor, const std::string& ca_pem,
             const pem_pair* identity = nullptr)
      : context_(make_context(ca_pem, identity)), stream_(executor, context_) {}

  asio::awaitable<error_code> connect(tcp::endpoint endpoint) {
    beast::tcp_stream& transport = beast::get_lowest_layer(stream_);
    transport.expires_after(10s);
    auto [connect_ec] = co_await transport.async_connect(endpoint, use_tuple);
    if (connect_ec) co_return connect_ec;
    auto [handshake_ec] = co_await stream_.async_handshake(ssl::stream_base::client, use_tuple);
    co_return handshake_ec;
  }

  asio::awaitable<error_code> send(http::request<http::string_body> request) {
    beast::get_lowest_layer(stream_).expires_after(10s);
    request.prepare_payload();
    auto [ec, bytes] = co_await http::async_write(stream_, request, use_tuple);
    co_return ec;
  }

  asio::awaitable<error_code> send_raw(std::string bytes) {
    beast::get_lowest_layer(stream_).expires_after(10s);
    auto [ec, written] = co_await asio::async_write(stream_, asio::buffer(bytes), use_tuple);
    co_return ec;
  }

  asio::awaitable<reply> receive() {
    beast::get_lowest_layer(stream_).expires_after(10s);
    reply result;
    auto [ec, bytes] = co_await http::async_read(stream_, buffer_, result.response, use_tuple);
    result.ec = ec;
    co_return result;
  }

  /// Sends a request and reads its answer.
  asio::awaitable<reply> exchange(std::string method, std::string target) {
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (method == "POST") request.body() = "{}";
    if (error_code ec = co_await send(std::move(request))) co_return reply{ec, {}};
    co_return co_await receive();
  }

  /// Reads until the server closes the connection; returns how the read ended.
  asio::awaitable<error_code> read_until_closed() {
    beast::get_lowest_layer(stream_).expires_after(10s);
    for (;;) {
      char data[256];
      auto [ec, bytes] = co_await stream_.async_read_some(asio::buffer(data), use_tuple);
      if (ec) co_return ec;
    }
  }

 private:
  static ssl::context make_context(const std::string& ca_pem, const pem_pair* identity) {
    ssl::context context(ssl::context::tls_client);
    context.add_certificate_authority(asio::buffer(ca_pem));
    context.set_verify_mode(ssl::verify_peer);
    context.set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    if (identity != nullptr) {
      context.use_certificate_chain(asio::buffer(identity->certificate));
      context.use_private_key(asio::buffer(identity->private_key), ssl::context::pem);
    }
    return context;
  }

  ssl::context context_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

std::string watch(std::uint64_t ms, std::uint64_t term) {
  return path + "?watch=" + std::to_string(ms) + "&term=" + std::to_string(term);
}

json::value body_of(const response_type& response) {
  error_code ec;
  json::value value = json::parse(response.body(), ec);
  EXPECT_FALSE(ec) << response.body();
  return value;
}

/// Runs `action` after `delay`: drives the source or the server while a request is held.
asio::awaitable<void> after(std::chrono::milliseconds delay, std::function<void()> action) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await timer.async_wait(asio::use_awaitable);
  action();
}

asio::awaitable<void> stop_server(health_server& server) {
  co_await server.async_stop();
}

class HealthServer : public ::testing::Test {
 protected:
  void SetUp() override { source.set_leader(42, record, 12s); }

  void TearDown() override {
    if (server) run(stop_server(*server));
    server.reset();
    io.restart();
    io.poll();
  }

  health_server_config base_config() const {
    health_server_config config;
    config.bind_address = "127.0.0.1:0";
    config.tls.certificate_pem = shared_test_pki().server.certificate;
    config.tls.private_key_pem = shared_test_pki().server.private_key;
    config.read_timeout = 2s;
    return config;
  }

  void start(health_server_config config) {
    server = std::make_unique<health_server>(io.get_executor(), source, std::move(config));
    const error_code ec = server->start();
    ASSERT_FALSE(ec) << ec.message();
    endpoint = server->local_endpoint();
    ASSERT_NE(endpoint.port(), 0);
  }

  /// Runs the io_context until `body` completes (the server's accept loop never runs out).
  void run(asio::awaitable<void> body) {
    auto done = asio::co_spawn(io, std::move(body), asio::use_future);
    const auto deadline = clock_type::now() + 60s;
    while (done.wait_for(0s) != std::future_status::ready && clock_type::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(100ms);
    }
    ASSERT_EQ(done.wait_for(0s), std::future_status::ready) << "test did not finish";
    done.get();
  }

  void later(std::chrono::milliseconds delay, std::function<void()> action) {
    asio::co_spawn(io, after(delay, std::move(action)), asio::detached);
  }

  std::unique_ptr<tls_client> client(const pem_pair* identity = nullptr) {
    return std::make_unique<tls_client>(io.get_executor(), shared_test_pki().ca.certificate,
                                        identity);
  }

  asio::io_context io;
  fake_leadership_source source{io.get_executor()};
  std::unique_ptr<health_server> server;
  tcp::endpoint endpoint;
};

// ---------------------------------------------------------------------------------------------
// Protocol over the wire

asio::awaitable<void> expect_leader_record(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  const reply answer = co_await client.exchange("GET", path);
  EXPECT_FALSE(answer.ec) << answer.ec.message();
  EXPECT_EQ(answer.response.result_int(), 200u);
  EXPECT_EQ(answer.response[http::field::content_type], "application/json");
  EXPECT_EQ(answer.response[http::field::cache_control], "no-store");
  const json::value body = body_of(answer.response);
  EXPECT_EQ(body.at("leaderID"), "node-a");
  EXPECT_EQ(body.at("leaderAddr"), "127.0.0.1:8443");
  EXPECT_EQ(body.at("nonce"), "9f1c2a7e5b3d4c11");
  EXPECT_EQ(body.at("term").to_number<std::uint64_t>(), 42u);
  EXPECT_EQ(body.at("leaseRemainingMs").to_number<std::int64_t>(), 12000);
}

TEST_F(HealthServer, GetWhileLeaderReturnsRecordWithTermAndLease) {
  start(base_config());
  auto c = client();
  run(expect_leader_record(*c, endpoint));
  EXPECT_EQ(server->stats().requests, 1u);
}

asio::awaitable<void> expect_follower_status(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  const reply answer = co_await client.exchange("GET", path);
  EXPECT_EQ(answer.response.result_int(), 404u);
  EXPECT_EQ(answer.response.body(), R"({"leader":false,"leaderID":"node-b","term":7})");
}

TEST_F(HealthServer, GetWhileFollowerReturns404WithStatus) {
  start(base_config());
  source.set_follower("node-b", 7);
  auto c = client();
  run(expect_follower_status(*c, endpoint));
}

asio::awaitable<void> expect_rejections(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  // All on one keep-alive connection: a rejected request does not end it.
  const reply post = co_await client.exchange("POST", path);
  EXPECT_EQ(post.response.result_int(), 405u);
  EXPECT_EQ(post.response[http::field::allow], "GET");
  EXPECT_TRUE(post.response.keep_alive());
  const reply elsewhere = co_await client.exchange("GET", "/health");
  EXPECT_EQ(elsewhere.response.result_int(), 404u);
  EXPECT_EQ(elsewhere.response.body(), R"({"error":"not_found"})");
  const reply bad = co_await client.exchange("GET", path + "?watch=soon&term=42");
  EXPECT_EQ(bad.response.result_int(), 400u);
  EXPECT_EQ(bad.response.body(),
            R"({"error":"bad_request","message":"watch: must be a decimal number, is 'soon'"})");
  const reply fine = co_await client.exchange("GET", path);
  EXPECT_EQ(fine.response.result_int(), 200u);
}

TEST_F(HealthServer, OtherMethodsPathsAndBadParametersAreRejected) {
  start(base_config());
  auto c = client();
  run(expect_rejections(*c, endpoint));
  EXPECT_EQ(server->stats().accepted_connections, 1u);
  EXPECT_EQ(server->stats().requests, 4u);
}

asio::awaitable<void> expect_two_on_one_connection(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  for (int i = 0; i < 2; ++i) {
    const reply answer = co_await client.exchange("GET", path);
    EXPECT_FALSE(answer.ec) << answer.ec.message();
    EXPECT_EQ(answer.response.result_int(), 200u);
    EXPECT_TRUE(answer.response.keep_alive());
  }
}

TEST_F(HealthServer, KeepAliveServesTwoRequestsOnOneConnection) {
  start(base_config());
  auto c = client();
  run(expect_two_on_one_connection(*c, endpoint));
  EXPECT_EQ(server->stats().accepted_connections, 1u);
  EXPECT_EQ(server->stats().requests, 2u);
  EXPECT_EQ(server->stats().active_connections, 1u);
}

// ---------------------------------------------------------------------------------------------
// Watches

struct timed_reply {
  reply answer;
  clock_type::duration took;
};

asio::awaitable<timed_reply> timed_exchange(tls_client& client, tcp::endpoint endpoint,
                                            std::string target) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  const auto start = clock_type::now();
  reply answer = co_await client.exchange("GET", std::move(target));
  co_return timed_reply{std::move(answer), clock_type::now() - start};
}

asio::awaitable<void> expect_watch(tls_client& client, tcp::endpoint endpoint, std::string target,
                                   unsigned status, std::string outcome,
                                   std::chrono::milliseconds at_least,
                                   std::chrono::milliseconds at_most) {
  const timed_reply result = co_await timed_exchange(client, endpoint, std::move(target));
  EXPECT_FALSE(result.answer.ec) << result.answer.ec.message();
  EXPECT_EQ(result.answer.response.result_int(), status) << result.answer.response.body();
  EXPECT_EQ(result.answer.response["X-S3lect-Watch"], outcome);
  EXPECT_GE(result.took, at_least);
  EXPECT_LE(result.took, at_most);
}

TEST_F(HealthServer, WatchCompletesPromptlyOnNewTerm) {
  start(base_config());
  later(200ms, [&] {
    EXPECT_EQ(server->stats().active_watches, 1u);
    source.set_leader(43, R"({"leaderID":"node-a","term":43})");
  });
  auto c = client();
  // Well before the 20 s watch time.
  run(expect_watch(*c, endpoint, watch(20000, 42), 200, "changed", 100ms, 5s));
  EXPECT_EQ(server->stats().active_watches, 0u);
}

TEST_F(HealthServer, WatchCompletesPromptlyOnDemotion) {
  start(base_config());
  later(200ms, [&] { source.set_follower("", 42); });
  auto c = client();
  run(expect_watch(*c, endpoint, watch(20000, 42), 404, "changed", 100ms, 5s));
}

TEST_F(HealthServer, WatchTimesOutWith200WhenNothingChanges) {
  start(base_config());
  auto c = client();
  run(expect_watch(*c, endpoint, watch(500, 42), 200, "timeout", 500ms, 5s));
}

TEST_F(HealthServer, WatchForAnOldTermAnswersAtOnce) {
  start(base_config());
  auto c = client();
  run(expect_watch(*c, endpoint, watch(20000, 41), 200, "changed", 0ms, 2s));
}

TEST_F(HealthServer, WatchersBeyondTheCapAreAnsweredAtOnce) {
  health_server_config config = base_config();
  config.handler.max_watchers = 1;
  start(config);
  auto first = client();
  auto second = client();
  // The first watch is held; 300 ms in, a second one is refused at once, then a new term
  // releases the first.
  later(300ms, [&] {
    EXPECT_EQ(server->stats().active_watches, 1u);
    asio::co_spawn(io, expect_watch(*second, endpoint, watch(20000, 42), 200, "refused", 0ms, 2s),
                   asio::detached);
  });
  later(1500ms, [&] { source.set_leader(43, "{}"); });
  run(expect_watch(*first, endpoint, watch(20000, 42), 200, "changed", 1s, 10s));
}

/// Owns its client, so that the connection closes (and the server's stop can finish) as soon
/// as the answer has been checked.
asio::awaitable<void> expect_stop_answers_watch(std::unique_ptr<tls_client> client,
                                                tcp::endpoint endpoint) {
  const timed_reply result = co_await timed_exchange(*client, endpoint, watch(20000, 42));
  EXPECT_FALSE(result.answer.ec) << result.answer.ec.message();
  EXPECT_EQ(result.answer.response.result_int(), 200u);
  EXPECT_EQ(result.answer.response["X-S3lect-Watch"], "stopping");
  EXPECT_FALSE(result.answer.response.keep_alive());
  EXPECT_LT(result.took, 5s);
}

asio::awaitable<void> stop_then_expect_refused(health_server& server, tcp::endpoint endpoint) {
  asio::steady_timer hold(co_await asio::this_coro::executor, 300ms);
  co_await hold.async_wait(asio::use_awaitable);
  EXPECT_EQ(server.stats().active_watches, 1u);
  EXPECT_EQ(server.stats().active_connections, 2u);
  co_await server.async_stop();
  EXPECT_EQ(server.stats().active_connections, 0u);
  tcp::socket socket(co_await asio::this_coro::executor);
  auto [ec] = co_await socket.async_connect(endpoint, use_tuple);
  EXPECT_EQ(ec, asio::error::connection_refused);
}

asio::awaitable<void> connect_only(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
}

TEST_F(HealthServer, GracefulStopAnswersPendingWatchesAndCloses) {
  start(base_config());
  auto idle = client();
  run(connect_only(*idle, endpoint));
  asio::co_spawn(io, expect_stop_answers_watch(client(), endpoint), asio::detached);
  // Completes once the watch is answered and both connections are closed.
  run(stop_then_expect_refused(*server, endpoint));
}

// ---------------------------------------------------------------------------------------------
// TLS

asio::awaitable<void> expect_handshake_failure(tls_client& client, tcp::endpoint endpoint) {
  const error_code ec = co_await client.connect(endpoint);
  EXPECT_TRUE(ec);
  EXPECT_EQ(ec.category(), asio::error::get_ssl_category()) << ec.message();
}

TEST_F(HealthServer, ClientWithTheRightCaConnectsAndOneWithAnotherCaFails) {
  start(base_config());
  auto good = client();
  run(expect_leader_record(*good, endpoint));
  tls_client stranger(io.get_executor(), other_test_pki().ca.certificate);
  run(expect_handshake_failure(stranger, endpoint));
}

TEST_F(HealthServer, ExpiredServerCertificateFailsVerification) {
  health_server_config config = base_config();
  config.tls.certificate_pem = shared_test_pki().expired_server.certificate;
  config.tls.private_key_pem = shared_test_pki().expired_server.private_key;
  start(config);
  auto c = client();
  run(expect_handshake_failure(*c, endpoint));
}

asio::awaitable<void> expect_request_refused(tls_client& client, tcp::endpoint endpoint) {
  // In TLS 1.3 the client finishes its handshake before the server has checked the client's
  // certificate: the refusal may arrive as the answer to the first request.
  const error_code connect_ec = co_await client.connect(endpoint);
  if (connect_ec) co_return;
  const reply answer = co_await client.exchange("GET", path);
  EXPECT_TRUE(answer.ec) << "answered " << answer.response.result_int();
}

TEST_F(HealthServer, MutualTlsRequiresAClientCertificateFromTheCa) {
  health_server_config config = base_config();
  config.tls.ca_pem = shared_test_pki().ca.certificate;
  config.tls.require_client_cert = true;
  start(config);
  auto anonymous = client();
  run(expect_request_refused(*anonymous, endpoint));
  auto foreign = client(&other_test_pki().client);
  run(expect_request_refused(*foreign, endpoint));
  auto member = client(&shared_test_pki().client);
  run(expect_leader_record(*member, endpoint));
  EXPECT_GE(server->stats().failed_handshakes, 2u);
}

asio::awaitable<void> claim_as(tls_client& client, tcp::endpoint endpoint, std::string id) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  const reply answer = co_await client.exchange(
      "GET", path + "?candidate=" + id + "&priority=3&token=00112233445566778899aabbccddeeff");
  EXPECT_EQ(answer.response.result_int(), 200u) << id;
}

// CA mode: a member's certificate vouches for a claim only for an id it names. The PKI's client
// certificate names DNS:localhost (and CN "test client"); claiming node-g with it, as a
// monitoring client once took node-g's place, is an anonymous claim that its registration must
// confirm.
TEST_F(HealthServer, AClientCertificateVouchesOnlyForTheIdsItNames) {
  health_server_config config = base_config();
  config.tls.ca_pem = shared_test_pki().ca.certificate;
  config.tls.require_client_cert = true;
  start(config);
  for (const char* id : {"localhost", "node-g"}) {
    auto member = client(&shared_test_pki().client);
    run(claim_as(*member, endpoint, id));
  }
  const std::vector<candidate_claim> claims = source.claims();
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].id, "localhost");
  EXPECT_TRUE(claims[0].verified_client);
  EXPECT_EQ(claims[1].id, "node-g");
  EXPECT_FALSE(claims[1].verified_client);
}

TEST_F(HealthServer, CertificatesAndClientCaFromFiles) {
  const temporary_file certificate(shared_test_pki().server.certificate);
  const temporary_file key(shared_test_pki().server.private_key);
  const temporary_file ca(shared_test_pki().ca.certificate);
  health_server_config config = base_config();
  config.tls.certificate_pem.clear();
  config.tls.private_key_pem.clear();
  config.tls.certificate_file = certificate.path();
  config.tls.private_key_file = key.path();
  config.tls.ca_file = ca.path();
  config.tls.require_client_cert = true;
  start(config);
  auto member = client(&shared_test_pki().client);
  run(expect_leader_record(*member, endpoint));
}

void expect_config_error(asio::io_context& io, leadership_source& source,
                         health_server_config config, const std::string& fragment) {
  try {
    health_server server(io.get_executor(), source, std::move(config));
    ADD_FAILURE() << "no exception for " << fragment;
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(HealthServer, UnusableCertificatesAreReportedByTheConstructor) {
  health_server_config config = base_config();
  config.tls.certificate_pem.clear();
  config.tls.certificate_file = "/nonexistent/cert.pem";
  expect_config_error(io, source, config, "health_server_config.tls.certificate_file: cannot load");
  config = base_config();
  config.tls.private_key_pem = shared_test_pki().client.private_key;
  expect_config_error(io, source, config, "tls.private_key_pem: cannot load");
  config = base_config();
  config.tls.certificate_pem = "not a certificate";
  expect_config_error(io, source, config, "tls.certificate_pem: cannot load");
  config = base_config();
  config.bind_address = "localhost:0";
  expect_config_error(io, source, config, "health_server_config.bind_address");
}

// ---------------------------------------------------------------------------------------------
// Hostile and broken clients

asio::awaitable<void> expect_header_limit(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  http::request<http::string_body> request{http::verb::get, path, 11};
  request.set(http::field::host, "127.0.0.1");
  request.set("X-Padding", std::string(4096, 'a'));
  const auto start = clock_type::now();
  co_await client.send(std::move(request));
  const reply answer = co_await client.receive();
  // A 431 when it arrives before the close, else just the close.
  if (!answer.ec) {
    EXPECT_EQ(answer.response.result_int(), 431u);
    EXPECT_FALSE(answer.response.keep_alive());
    EXPECT_TRUE(co_await client.read_until_closed());
  }
  EXPECT_LT(clock_type::now() - start, 3s);
}

TEST_F(HealthServer, OversizedHeadersAreRefusedQuickly) {
  health_server_config config = base_config();
  config.max_header_bytes = 1024;
  start(config);
  auto c = client();
  run(expect_header_limit(*c, endpoint));
  auto next = client();
  run(expect_leader_record(*next, endpoint));
}

asio::awaitable<void> dribble(tls_client& client, bool& done) {
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  asio::steady_timer pace(co_await asio::this_coro::executor);
  for (std::size_t i = 0; !done; ++i) {
    const char byte = i < request.size() ? request[i] : 'a';
    if (co_await client.send_raw(std::string(1, byte))) break;
    pace.expires_after(100ms);
    co_await pace.async_wait(use_tuple);
  }
}

asio::awaitable<void> expect_slow_client_cut_off(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  bool done = false;
  bool dribbler_finished = false;
  asio::steady_timer finished(co_await asio::this_coro::executor,
                              asio::steady_timer::time_point::max());
  const auto start = clock_type::now();
  asio::co_spawn(co_await asio::this_coro::executor, dribble(client, done),
                 [&](std::exception_ptr) {
                   dribbler_finished = true;
                   finished.cancel();
                 });
  const error_code ec = co_await client.read_until_closed();
  const auto took = clock_type::now() - start;
  // The dribbler uses `client` and `done`: wait for it before they go away.
  done = true;
  if (!dribbler_finished) co_await finished.async_wait(use_tuple);
  EXPECT_TRUE(ec);
  EXPECT_GE(took, 400ms);  // read_timeout is 500 ms from the first byte
  EXPECT_LT(took, 3s);
}

TEST_F(HealthServer, SlowClientIsCutOffAfterReadTimeout) {
  health_server_config config = base_config();
  config.read_timeout = 500ms;
  start(config);
  auto slow = client();
  run(expect_slow_client_cut_off(*slow, endpoint));
  slow.reset();
  auto next = client();
  run(expect_leader_record(*next, endpoint));
}

asio::awaitable<void> expect_garbage_refused(tls_client& client, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await client.connect(endpoint));
  co_await client.send_raw(std::string("\x01\x02\x03 \xff\xfe\r\n\r\n", 10));
  const reply answer = co_await client.receive();
  if (!answer.ec) {
    EXPECT_EQ(answer.response.result_int(), 400u);
    EXPECT_FALSE(answer.response.keep_alive());
  }
  EXPECT_TRUE(co_await client.read_until_closed());
}

TEST_F(HealthServer, NonHttpBytesAfterTlsAreAnswered400AndClosed) {
  start(base_config());
  auto c = client();
  run(expect_garbage_refused(*c, endpoint));
  auto next = client();
  run(expect_leader_record(*next, endpoint));
}

asio::awaitable<void> expect_plain_http_closed(tcp::endpoint endpoint) {
  tcp::socket socket(co_await asio::this_coro::executor);
  auto [connect_ec] = co_await socket.async_connect(endpoint, use_tuple);
  EXPECT_FALSE(connect_ec);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  co_await asio::async_write(socket, asio::buffer(request), use_tuple);
  std::string received;
  auto [read_ec, bytes] =
      co_await asio::async_read(socket, asio::dynamic_buffer(received), use_tuple);
  EXPECT_TRUE(read_ec);  // EOF or reset once the server gives up on the handshake
  EXPECT_EQ(received.find("HTTP/1.1 200"), std::string::npos);
}

TEST_F(HealthServer, PlainHttpOnTheTlsPortFailsTheHandshakeAndTheServerSurvives) {
  start(base_config());
  run(expect_plain_http_closed(endpoint));
  EXPECT_EQ(server->stats().failed_handshakes, 1u);
  auto next = client();
  run(expect_leader_record(*next, endpoint));
}

asio::awaitable<void> expect_connection_limit(tls_client& first, tls_client& second,
                                              tls_client& third, tcp::endpoint endpoint) {
  EXPECT_FALSE(co_await first.connect(endpoint));
  EXPECT_FALSE(co_await second.connect(endpoint));
  // The server accepts the third connection and closes it at once.
  const error_code ec = co_await third.connect(endpoint);
  EXPECT_TRUE(ec);
  const reply answer = co_await first.exchange("GET", path);
  EXPECT_EQ(answer.response.result_int(), 200u);
}

TEST_F(HealthServer, MaxConnectionsIsEnforced) {
  health_server_config config = base_config();
  config.max_connections = 2;
  start(config);
  auto first = client();
  auto second = client();
  auto third = client();
  run(expect_connection_limit(*first, *second, *third, endpoint));
  EXPECT_EQ(server->stats().rejected_connections, 1u);
  EXPECT_EQ(server->stats().active_connections, 2u);
}

// ---------------------------------------------------------------------------------------------
// Binding and lifetime

TEST_F(HealthServer, BindErrorsAreReturnedFromStart) {
  start(base_config());
  health_server_config taken = base_config();
  taken.bind_address = "127.0.0.1:" + std::to_string(endpoint.port());
  health_server second(io.get_executor(), source, taken);
  EXPECT_EQ(second.start(), asio::error::address_in_use);
  EXPECT_EQ(second.local_endpoint(), tcp::endpoint());

  health_server_config foreign = base_config();
  foreign.bind_address = "192.0.2.1:0";  // TEST-NET-1: never a local address
  health_server third(io.get_executor(), source, foreign);
  EXPECT_EQ(third.start(), boost::system::errc::address_not_available);

  EXPECT_EQ(server->start(), asio::error::already_started);
}

asio::awaitable<void> expect_connection_dropped(tls_client& client, tcp::endpoint endpoint) {
  const timed_reply result = co_await timed_exchange(client, endpoint, watch(20000, 42));
  EXPECT_TRUE(result.answer.ec);
  EXPECT_LT(result.took, 5s);
}

TEST_F(HealthServer, DestroyingTheServerDropsPendingWatchesWithoutTouchingTheSource) {
  start(base_config());
  auto c = client();
  later(300ms, [&] { server.reset(); });
  run(expect_connection_dropped(*c, endpoint));
}

TEST_F(HealthServer, StopBeforeStartCompletesAndStartThenFails) {
  server = std::make_unique<health_server>(io.get_executor(), source, base_config());
  run(stop_server(*server));
  EXPECT_EQ(server->start(), errc::stopped);
}

// ---------------------------------------------------------------------------------------------
// Embedding in an application's Beast server

asio::awaitable<void> expect_embedded_watch(health_handler& handler) {
  http::request<http::string_body> request{http::verb::get, watch(200, 42), 11};
  auto [ec, response] = co_await async_handle_health_request(handler, request, use_tuple);
  EXPECT_FALSE(ec);
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response["X-S3lect-Watch"], "timeout");
  EXPECT_TRUE(response.keep_alive());
  EXPECT_EQ(response[http::field::content_length], std::to_string(response.body().size()));
}

TEST_F(HealthServer, BeastHandlerAnswersBeastRequests) {
  health_handler handler(io.get_executor(), source);
  http::request<http::string_body> request{http::verb::get, path, 10};
  const response_type answer = handle_health_request(handler, request);
  EXPECT_EQ(answer.result_int(), 200u);
  EXPECT_EQ(answer.version(), 10u);
  EXPECT_FALSE(answer.keep_alive());
  EXPECT_EQ(body_of(answer).at("term").to_number<std::uint64_t>(), 42u);
  request.method(http::verb::delete_);
  EXPECT_EQ(handle_health_request(handler, request).result_int(), 405u);
  run(expect_embedded_watch(handler));
}

}  // namespace
}  // namespace s3lect
