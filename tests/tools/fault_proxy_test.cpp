// The chaos fault proxy (tests/chaos/fault_proxy_server.hpp) in front of the local radosgw: each
// fault has its effect on a real S3 request made by s3_client, and `heal` undoes it.
#include "fault_proxy_server.hpp"

#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "support/local_s3_test.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

class FaultProxyIntegration : public test::local_s3_test {
 protected:
  void SetUp() override {
    local_s3_test::SetUp();
    if (HasFatalFailure()) return;
    const std::string upstream = s3.http_endpoint.substr(s3.http_endpoint.find("://") + 3);
    const auto colon = upstream.rfind(':');
    const tcp::endpoint upstream_endpoint(
        asio::ip::make_address(upstream.substr(0, colon)),
        static_cast<unsigned short>(std::stoi(upstream.substr(colon + 1))));
    const std::vector<chaos::fault_proxy::listen_spec> listeners{
        {"node", tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)}};
    proxy = std::make_unique<chaos::fault_proxy>(io.get_executor(), upstream_endpoint, listeners,
                                                 std::nullopt);
    proxy->start();
    key = "it/fault-proxy-" + test::unique_suffix();
  }

  void TearDown() override {
    if (proxy) proxy->stop();
  }

  /// A client of the store through the proxy; a fresh one has no pooled connection.
  std::unique_ptr<s3_client> client(std::chrono::milliseconds timeout = 800ms) {
    s3_config config = s3.config(false);
    config.endpoint = "http://127.0.0.1:" + std::to_string(proxy->listener_endpoint("node").port());
    config.addressing = addressing_style::path;
    config.request_timeout = timeout;
    return std::make_unique<s3_client>(io.get_executor(), config);
  }

  std::pair<error_code, get_result> get(s3_client& c) {
    return test::run_until_complete<get_result>(
        io, [&](auto handler) { c.async_get(key, std::move(handler)); });
  }
  std::pair<error_code, put_result> put(s3_client& c, const std::string& body) {
    return test::run_until_complete<put_result>(io, [&](auto handler) {
      c.async_put(key, body, put_condition::absent(), std::move(handler));
    });
  }
  void control(const std::string& line) {
    const std::string reply = proxy->execute(line);
    ASSERT_EQ(reply.substr(0, 2), "ok") << line << " -> " << reply;
  }

  asio::io_context io;
  std::unique_ptr<chaos::fault_proxy> proxy;
  std::string key;
};

TEST_F(FaultProxyIntegration, HealthyProxyIsTransparent) {
  auto c = client();
  auto [put_error, written] = put(*c, "through the proxy");
  ASSERT_FALSE(put_error) << put_error.message();
  auto [get_error, read] = get(*c);
  ASSERT_FALSE(get_error) << get_error.message();
  ASSERT_TRUE(read.found);
  EXPECT_EQ(read.found->body, "through the proxy");
  EXPECT_EQ(read.found->etag, written.etag);
}

TEST_F(FaultProxyIntegration, LatencyDelaysEachDirection) {
  auto c = client(3s);
  ASSERT_FALSE(get(*c).first);  // connect and warm up
  for (const char* direction : {"up", "down"}) {
    control(std::string("latency node ") + direction + " 400");
    const auto started = steady::now();
    auto [error, read] = get(*c);
    const auto took = steady::now() - started;
    EXPECT_FALSE(error) << direction << ": " << error.message();
    EXPECT_GE(took, 400ms) << direction;
    control("heal node");
  }
  const auto started = steady::now();
  EXPECT_FALSE(get(*c).first);
  EXPECT_LT(steady::now() - started, 400ms);
}

TEST_F(FaultProxyIntegration, GlobalLatencyAppliesToEveryListener) {
  auto c = client(3s);
  control("latency global down 300");
  const auto started = steady::now();
  EXPECT_FALSE(get(*c).first);
  EXPECT_GE(steady::now() - started, 300ms);
}

TEST_F(FaultProxyIntegration, DropClosesNewConnections) {
  control("drop node on");
  auto c = client();
  auto [error, read] = get(*c);
  EXPECT_TRUE(error == errc::connection_lost || error == errc::protocol_error) << error.message();
  control("heal node");
  auto fresh = client();
  EXPECT_FALSE(get(*fresh).first);
}

TEST_F(FaultProxyIntegration, BlackholeHoldsRequestsUntilTheClientTimesOut) {
  control("blackhole node both on");
  auto c = client(500ms);
  const auto started = steady::now();
  auto [error, read] = get(*c);
  EXPECT_EQ(error, errc::timeout) << error.message();
  EXPECT_GE(steady::now() - started, 500ms);
  control("heal node");
  auto fresh = client();
  EXPECT_FALSE(get(*fresh).first);
}

TEST_F(FaultProxyIntegration, ABlackholedResponseHidesAWriteThatLanded) {
  // Only server-to-client is cut: the PUT reaches the store, its answer does not reach us.
  control("blackhole node down on");
  auto c = client(500ms);
  auto [error, written] = put(*c, "landed unseen");
  // The whole request was written before the timeout, so the client cannot tell whether it
  // applied: a PUT reports that as outcome_unknown, never as a plain timeout (which would let a
  // caller retry a write that landed).
  EXPECT_EQ(error, errc::outcome_unknown) << error.message();
  control("heal node");
  auto fresh = client();
  auto [get_error, read] = get(*fresh);
  ASSERT_FALSE(get_error) << get_error.message();
  ASSERT_TRUE(read.found);
  EXPECT_EQ(read.found->body, "landed unseen");
}

// A blackhole holds the bytes (the proxy stops reading) as a partition holds TCP segments: on
// heal they flow again, and a request the client gave up on may still land then, as it may
// after a real partition. So this checks the store directly, not through the proxy, while the
// blackhole is on.
TEST_F(FaultProxyIntegration, ABlackholedRequestDoesNotLandWhileBlackholed) {
  control("blackhole node up on");
  auto c = client(500ms);
  auto [error, written] = put(*c, "never sent");
  // The request went into the socket (the proxy holds it): from the client's side it may have
  // been delivered, so the timeout of a PUT is outcome_unknown here too.
  EXPECT_EQ(error, errc::outcome_unknown) << error.message();
  s3_config direct_config = s3.config(false);
  direct_config.addressing = addressing_style::path;
  s3_client direct(io.get_executor(), direct_config);
  auto [get_error, read] = get(direct);
  ASSERT_FALSE(get_error) << get_error.message();
  EXPECT_FALSE(read.found) << "the held request reached the store";
  c.reset();
  control("heal node");
}

TEST_F(FaultProxyIntegration, ResetAbortsARequestInFlight) {
  for (const char* side : {"client", "server", "both"}) {
    // A fresh client: s3_client retries a request once on a new connection when a pooled
    // keep-alive connection turns out dead, which would hide the reset.
    auto c = client(3s);
    // Hold the answer, then reset the connection while the request waits for it.
    control("latency node down 1000");
    asio::steady_timer reset_timer(io);
    reset_timer.expires_after(200ms);
    const std::string line = std::string("reset node ") + side;
    std::string reply;
    reset_timer.async_wait([this, &line, &reply](error_code) { reply = proxy->execute(line); });
    const auto started = steady::now();
    auto [error, read] = get(*c);
    EXPECT_LT(steady::now() - started, 1000ms) << side;  // cut short, not answered late
    EXPECT_EQ(reply.substr(0, 2), "ok") << reply;
    EXPECT_TRUE(error == errc::connection_lost || error == errc::protocol_error)
        << side << ": " << error.message();
    control("heal node");
    EXPECT_FALSE(get(*c).first) << side;  // a new connection works
  }
}

}  // namespace
}  // namespace s3lect
