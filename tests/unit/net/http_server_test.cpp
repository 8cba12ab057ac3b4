// The server skeleton shared by the health server and the metrics listener, with a scripted
// responder: keep-alive and pipelining, answers given later, rejections, the connection limit,
// the idle timeout and the stop; and against a hostile client (silent connections from one
// address, 127.0.0.2): the per-source limit, the first-request deadline, the watch pool, and
// the rate-limited log of what was dropped.
#include "http_server.hpp"

#include <s3lect/error.hpp>

#include "support/background_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using s3lect::detail::http_server;
using s3lect::detail::http_server_settings;
using s3lect::detail::server_answer;
using s3lect::detail::server_request;

/// Answers "<method> <target>" at once (HEAD without the body), and "later <target>" for
/// targets under /later and /hold; /hold is held like a watch until release().
class echo_responder final : public s3lect::detail::http_responder {
 public:
  explicit echo_responder(asio::any_io_executor executor) : gate_(std::move(executor)) {}

  std::optional<server_answer> answer_at_once(const server_request& request) override {
    if (request.target.rfind("/later", 0) == 0 || request.target == "/hold") return std::nullopt;
    server_answer answer =
        s3lect::detail::plain_text_answer(200, request.method + " " + request.target);
    answer.head = request.method == "HEAD";
    return answer;
  }

  asio::awaitable<server_answer> answer_later(server_request request) override {
    if (request.target == "/hold") {
      holding.set_value();
      gate_.expires_at(asio::steady_timer::time_point::max());
      auto [ec] = co_await gate_.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
    co_return s3lect::detail::plain_text_answer(200, "later " + request.target);
  }

  /// Answers the held /hold request.
  void release() {
    asio::post(gate_.get_executor(), [this] { gate_.cancel(); });
  }

  server_answer reject(unsigned status, std::string problem) override {
    return s3lect::detail::plain_text_answer(status, problem);
  }

  void stopping() override { ++stops; }

  std::atomic<int> stops{0};
  std::promise<void> holding;  ///< Set once /hold is being held.

 private:
  asio::steady_timer gate_;
};

using s3lect::test::background_io;

/// A blocking client connection that gives up reading after 10 s, from `source` (127.0.0.2:
/// Linux loopback answers the whole of 127/8).
struct client {
  explicit client(tcp::endpoint endpoint, const char* source = "127.0.0.1") : socket(io) {
    socket.open(tcp::v4());
    socket.bind({asio::ip::make_address(source), 0});
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
    settings.log.sink = [this](s3lect::log_level level, std::string_view line) {
      const std::lock_guard lock(lines_mutex);
      lines.emplace_back(level, std::string(line));
    };
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

  // Before the io thread: the server logs until that thread ends.
  std::mutex lines_mutex;
  std::vector<std::pair<s3lect::log_level, std::string>> lines;

  /// The lines about dropped connections logged so far.
  std::vector<std::pair<s3lect::log_level, std::string>> dropped_lines() {
    const std::lock_guard lock(lines_mutex);
    std::vector<std::pair<s3lect::log_level, std::string>> dropped;
    for (const auto& line : lines) {
      if (line.second.find("dropped connections") != std::string::npos) dropped.push_back(line);
    }
    return dropped;
  }

  background_io runner;
  std::shared_ptr<echo_responder> responder =
      std::make_shared<echo_responder>(runner.io.get_executor());
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

TEST_F(HttpServer, SilentConnectionsFromOneAddressAreCappedAndClosedByTheFirstRequestDeadline) {
  http_server_settings settings;
  settings.first_request_timeout = 300ms;
  settings.max_connections_per_source = 4;
  settings.dropped_log_interval = 1h;  // one line at once, the rest at the stop
  start(settings);
  std::vector<std::unique_ptr<client>> silent;
  for (int i = 0; i < 10; ++i) {
    silent.push_back(std::make_unique<client>(server->local_endpoint(), "127.0.0.2"));
  }
  client probe(server->local_endpoint());
  probe.send("GET /probe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(probe.read_to_end().find("GET /probe"), std::string::npos);
  // Six are closed at once, four by the deadline: none waits for the 90 s idle timeout (the
  // reads would give up after 10 s and report it).
  for (auto& connection : silent) EXPECT_EQ(connection->read_to_end(), "");
  stop();  // every connection's end is counted once the stop completes
  const auto stats = server->stats();
  EXPECT_EQ(stats.accepted_connections, 11u);
  EXPECT_EQ(stats.refused_per_source, 6u);
  EXPECT_EQ(stats.rejected_connections, 6u);
  EXPECT_EQ(stats.refused_max_connections, 0u);
  EXPECT_EQ(stats.first_request_timeouts, 4u);
  EXPECT_EQ(stats.requests, 1u);

  const auto logged = dropped_lines();
  ASSERT_EQ(logged.size(), 2u) << "not one line per connection";
  EXPECT_EQ(logged[0].first, s3lect::log_level::warning);
  EXPECT_NE(logged[0].second.find("refused_per_source=1 "), std::string::npos) << logged[0].second;
  EXPECT_NE(logged[1].second.find("refused_per_source=5 "), std::string::npos) << logged[1].second;
  EXPECT_NE(logged[1].second.find("first_request_timeouts=4 "), std::string::npos)
      << logged[1].second;
  EXPECT_NE(logged[1].second.find("last_source=127.0.0.2"), std::string::npos) << logged[1].second;
}

TEST_F(HttpServer, AHeldWatchTakesNoConnectionSlotAndProbesTakeNoWatchSlot) {
  http_server_settings settings;
  settings.max_connections = 1;
  start(settings);
  client watcher(server->local_endpoint());
  watcher.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(responder->holding.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(server->stats().active_watches, 1u);

  // The one slot is free for a probe while the watch is held...
  client kept(server->local_endpoint());
  kept.send("GET /kept HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string answer(256, '\0');
  answer.resize(kept.socket.read_some(asio::buffer(answer)));
  EXPECT_NE(answer.find("GET /kept"), std::string::npos) << answer;
  // ...and once the probe's connection holds it, the next is refused.
  client refused(server->local_endpoint());
  EXPECT_EQ(refused.read_to_end(), "");
  EXPECT_EQ(server->stats().refused_max_connections, 1u);

  // The watch is answered; with the pool full meanwhile, its connection closes after it.
  responder->release();
  const std::string watched = watcher.read_to_end();
  EXPECT_NE(watched.find("later /hold"), std::string::npos) << watched;
  EXPECT_NE(watched.find("Connection: close"), std::string::npos) << watched;
  EXPECT_EQ(server->stats().active_watches, 0u);
}

}  // namespace
