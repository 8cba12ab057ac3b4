// A loopback HTTP/1.1 server for unit tests whose replies are scripted per request: well-formed
// answers, raw bytes (garbage, truncation), closing the connection, or never answering. It runs
// on its own thread and io_context, binds 127.0.0.1 on an ephemeral port, and records every
// request it receives. Plain Asio, no Beast: it must not cost a Beast compile.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace s3lect::test {

/// A request as the server received it.
struct recorded_request {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::size_t connection = 0;  ///< index of the accepted connection, from 0
  std::size_t sequence = 0;    ///< index of the request on its connection, from 0

  /// The first header named `name` (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const {
    for (const auto& [field, value] : headers) {
      if (field.size() == name.size() &&
          std::equal(field.begin(), field.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          })) {
        return value;
      }
    }
    return {};
  }
};

/// What the server does with one request.
struct scripted_reply {
  enum class then {
    keep_open,  ///< write `raw`, then wait for the next request on the connection
    close,      ///< write `raw`, then close the connection
    hang,       ///< write `raw` (usually empty), then never say anything again
  };
  std::string raw;  ///< bytes written verbatim
  then after = then::keep_open;
};

/// A well-formed reply with Content-Length and the given extra header lines ("Name: value").
inline scripted_reply http_reply(unsigned status, std::string body = {},
                                 std::vector<std::string> header_lines = {},
                                 scripted_reply::then after = scripted_reply::then::keep_open) {
  std::string raw = "HTTP/1.1 " + std::to_string(status) + " Scripted\r\n";
  for (const auto& line : header_lines) raw += line + "\r\n";
  raw += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  raw += body;
  scripted_reply reply;
  reply.raw = std::move(raw);
  reply.after = after;
  return reply;
}

/// An S3 XML error reply.
inline scripted_reply s3_error_reply(unsigned status, std::string_view code,
                                     std::string_view message = "scripted error",
                                     std::string_view request_id = "req-1") {
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" +
                     std::string(code) + "</Code><Message>" + std::string(message) +
                     "</Message><RequestId>" + std::string(request_id) + "</RequestId></Error>";
  return http_reply(status, std::move(body), {"Content-Type: application/xml"});
}

/// Closes the connection as soon as the request has been read, without a reply.
inline scripted_reply drop_connection() {
  scripted_reply reply;
  reply.after = scripted_reply::then::close;
  return reply;
}

/// Reads the request and never answers: a server that hangs.
inline scripted_reply never_answer() {
  scripted_reply reply;
  reply.after = scripted_reply::then::hang;
  return reply;
}

/// Accepts nothing more than it is told: answers each request with `script(request)`.
class scripted_http_server {
 public:
  using script = std::function<scripted_reply(const recorded_request&)>;

  explicit scripted_http_server(script s)
      : script_(std::move(s)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        port_(acceptor_.local_endpoint().port()) {
    boost::asio::co_spawn(io_, accept_loop(), boost::asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  ~scripted_http_server() {
    io_.stop();
    thread_.join();
  }

  scripted_http_server(const scripted_http_server&) = delete;
  scripted_http_server& operator=(const scripted_http_server&) = delete;

  std::uint16_t port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<recorded_request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::size_t connections_accepted() const {
    std::lock_guard lock(mutex_);
    return accepted_;
  }
  /// Waits until the server has closed `count` connections after a `then::close` reply (their
  /// FIN is then on its way over loopback), or `limit` passes; returns whether it had.
  bool wait_for_closed(std::size_t count, std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return closed_changed_.wait_for(lock, limit, [&] { return closed_ >= count; });
  }

 private:
  using tcp = boost::asio::ip::tcp;

  boost::asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
      tcp::socket socket = co_await acceptor_.async_accept(token);
      if (ec) co_return;
      std::size_t index = 0;
      {
        std::lock_guard lock(mutex_);
        index = accepted_++;
      }
      boost::asio::co_spawn(io_, serve(std::move(socket), index), boost::asio::detached);
    }
  }

  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  /// Parses the request line and headers of `head` (which ends with an empty line).
  static recorded_request parse_head(std::string_view head) {
    recorded_request request;
    std::size_t line_end = head.find("\r\n");
    const std::string_view request_line = head.substr(0, line_end);
    const std::size_t space1 = request_line.find(' ');
    const std::size_t space2 = request_line.find(' ', space1 + 1);
    request.method = std::string(request_line.substr(0, space1));
    request.target = std::string(request_line.substr(space1 + 1, space2 - space1 - 1));
    std::size_t pos = line_end + 2;
    while (pos < head.size()) {
      line_end = head.find("\r\n", pos);
      const std::string_view line = head.substr(pos, line_end - pos);
      pos = line_end + 2;
      if (line.empty()) break;
      const std::size_t colon = line.find(':');
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      request.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    return request;
  }

  boost::asio::awaitable<void> serve(tcp::socket socket, std::size_t index) {
    std::string buffer;
    boost::system::error_code ec;
    auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
    for (std::size_t sequence = 0;; ++sequence) {
      const std::size_t head_size = co_await boost::asio::async_read_until(
          socket, boost::asio::dynamic_buffer(buffer), "\r\n\r\n", token);
      if (ec) co_return;
      recorded_request request = parse_head(std::string_view(buffer).substr(0, head_size));
      buffer.erase(0, head_size);
      const std::string length_text = request.header("Content-Length");
      const std::size_t length = length_text.empty() ? 0 : std::stoul(length_text);
      if (buffer.size() < length) {
        co_await boost::asio::async_read(socket, boost::asio::dynamic_buffer(buffer),
                                         boost::asio::transfer_exactly(length - buffer.size()),
                                         token);
        if (ec) co_return;
      }
      request.body = buffer.substr(0, length);
      buffer.erase(0, length);
      request.connection = index;
      request.sequence = sequence;
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(request);
      }

      const scripted_reply reply = script_(request);
      if (!reply.raw.empty()) {
        co_await boost::asio::async_write(socket, boost::asio::buffer(reply.raw), token);
        if (ec) co_return;
      }
      if (reply.after == scripted_reply::then::close) {
        socket.shutdown(tcp::socket::shutdown_both, ec);
        socket.close(ec);
        {
          std::lock_guard lock(mutex_);
          ++closed_;
        }
        closed_changed_.notify_all();
        co_return;
      }
      if (reply.after == scripted_reply::then::hang) {
        // Read and discard until the client gives up and closes.
        char sink[256];
        for (;;) {
          co_await socket.async_read_some(boost::asio::buffer(sink), token);
          if (ec) co_return;
        }
      }
    }
  }

  script script_;
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::uint16_t port_;
  mutable std::mutex mutex_;
  std::vector<recorded_request> requests_;
  std::size_t accepted_ = 0;
  std::size_t closed_ = 0;
  std::condition_variable closed_changed_;
  std::thread thread_;
};

}  // namespace s3lect::test
