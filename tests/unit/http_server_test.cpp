// The server skeleton shared by the health server and the metrics listener, with a scripted
// responder: keep-alive and pipelining, answers given later, rejections, the connection limit,
// the idle timeout and the stop.
#include "http_server.hpp"

#include <s3lect/error.hpp>

#include "fake/background_io.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using s3lect::detail::http_server;
using s3lect::detail::http_server_settings;
using s3lect::detail::server_answer;
using s3lect::detail::server_request;

/// Answers "<method> <target>" at once (HEAD without the body), and "later <target>" for
/// targets under /later.
class echo_responder final : public s3lect::detail::http_responder {
 public:
  std::optional<server_answer> answer_at_once(const server_request& request) override {
    if (request.target.rfind("/later", 0) == 0) return std::nullopt;
    server_answer answer =
        s3lect::detail::plain_text_answer(200, request.method + " " + request.target);
    answer.head = request.method == "HEAD";
    return answer;
  }

  asio::awaitable<server_answer> answer_later(server_request request) override {
    co_return s3lect::detail::plain_text_answer(200, "later " + request.target);
  }

  server_answer reject(unsigned status, std::string problem) override {
    return s3lect::detail::plain_text_answer(status, problem);
  }

  void stopping() override { ++stops; }

  std::atomic<int> stops{0};
};

using s3lect::test::background_io;

/// A blocking client connection that gives up reading after 10 s.
struct client {
  explicit client(tcp::endpoint endpoint) : socket(io) {
    socket.connect(endpoint);
    timeval timeout{10, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }

  void send(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }

  /// Everything until the server closes the connection.
  std::string read_to_end() {
    std::string raw;
    boost::system::error_code ec;
    asio::read(socket, asio::dynamic_buffer(raw), ec);
    EXPECT_EQ(ec, asio::error::eof) << ec.message();
    return raw;
  }

  asio::io_context io;
  tcp::socket socket;
};

class HttpServer : public ::testing::Test {
 protected:
  http_server& start(http_server_settings settings = {}) {
    settings.name = "test";
    settings.endpoint = {asio::ip::make_address("127.0.0.1"), 0};
    server.emplace(runner.io.get_executor(), settings, responder);
    EXPECT_FALSE(server->start());
    return *server;
  }

  void stop() {
    std::promise<void> done;
    server->stop([&done](boost::system::error_code) { done.set_value(); });
    ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  }

  background_io runner;
  std::shared_ptr<echo_responder> responder = std::make_shared<echo_responder>();
  std::optional<http_server> server;
};

TEST_F(HttpServer, AnswersPipelinedRequestsInOrderOnOneConnection) {
  start();
  client peer(server->local_endpoint());
  peer.send(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /later/b HTTP/1.1\r\nHost: x\r\n\r\n"
      "HEAD /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string raw = peer.read_to_end();
  const auto first = raw.find("GET /a");
  const auto second = raw.find("later /later/b");
  ASSERT_NE(first, std::string::npos) << raw;
  ASSERT_NE(second, std::string::npos) << raw;
  EXPECT_LT(first, second);
  EXPECT_EQ(raw.find("HEAD /c"), std::string::npos) << "a HEAD answer carries no body: " << raw;
  EXPECT_NE(raw.find("Content-Length: 7\r\nConnection: close\r\n\r\n"), std::string::npos) << raw;
  EXPECT_EQ(server->stats().requests, 3u);
}

TEST_F(HttpServer, RejectsMalformedAndOversizedRequestsAndCloses) {
  http_server_settings settings;
  settings.max_header_bytes = 1024;
  start(settings);
  client malformed(server->local_endpoint());
  malformed.send("NOT HTTP\r\n\r\n");
  const std::string bad = malformed.read_to_end();
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  EXPECT_NE(bad.find("malformed HTTP request: "), std::string::npos) << bad;

  client oversized(server->local_endpoint());
  oversized.send("GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n");
  const std::string large = oversized.read_to_end();
  EXPECT_EQ(large.rfind("HTTP/1.1 431 ", 0), 0u) << large;
}

TEST_F(HttpServer, ClosesConnectionsBeyondTheLimitAndIdleOnes) {
  http_server_settings settings;
  settings.max_connections = 1;
  settings.idle_timeout = 200ms;
  start(settings);
  client first(server->local_endpoint());
  first.send("GET /kept HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string answer(256, '\0');
  answer.resize(first.socket.read_some(asio::buffer(answer)));
  EXPECT_NE(answer.find("GET /kept"), std::string::npos) << answer;

  client second(server->local_endpoint());
  EXPECT_EQ(second.read_to_end(), "");
  // The first connection, idle, is closed by the idle timeout.
  EXPECT_EQ(first.read_to_end(), "");
  const auto stats = server->stats();
  EXPECT_EQ(stats.accepted_connections, 2u);
  EXPECT_EQ(stats.rejected_connections, 1u);
}

TEST_F(HttpServer, StopsGracefullyOnceAndRefusesToStartAgain) {
  start();
  EXPECT_EQ(server->start(), asio::error::already_started);
  client idle(server->local_endpoint());
  idle.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string answer(256, '\0');
  answer.resize(idle.socket.read_some(asio::buffer(answer)));
  EXPECT_NE(answer.find("GET /first"), std::string::npos) << answer;

  stop();
  EXPECT_TRUE(server->stopping());
  EXPECT_EQ(responder->stops.load(), 1);
  EXPECT_EQ(idle.read_to_end(), "") << "an idle connection is closed by the stop";
  EXPECT_EQ(server->stats().active_connections, 0u);
  stop();  // a second stop completes too
  EXPECT_EQ(responder->stops.load(), 1);
}

}  // namespace
