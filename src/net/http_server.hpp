// The one HTTP server skeleton of s3lect, used by the health server (HTTPS) and the metrics
// listener (HTTP): listening, the accept loop with a connection limit, the optional TLS
// handshake, keep-alive sessions with bounded reads and timeouts, and a graceful stop. What a
// server answers is its http_responder's business. Beast-free; the Beast and OpenSSL work is in
// http_server.cpp.
#pragma once

#include <s3lect/logger.hpp>
#include <s3lect/server_stats.hpp>

#include "http_message.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace s3lect::inline v1::detail {

struct http_server_state;

/// A request as a responder sees it: read completely, its body ignored.
struct server_request {
  std::string method;  ///< as sent; compared case-sensitively, as HTTP requires
  std::string target;
  unsigned version = 11;  ///< 10 or 11
  bool keep_alive = true;
  /// The client's source address as connection_admission counts it (source_name()).
  std::string source;
  /// Under TLS, the client presented a certificate the server's CAs verified.
  bool verified_client = false;
  /// Its names (SAN DNS and URI, then CN): what ids it may claim.
  std::vector<std::string> client_names;
};

/// An answer; the server adds Content-Length and Connection.
struct server_answer {
  unsigned status = 200;
  http_fields headers;
  std::string body;
  bool head = false;  ///< a HEAD answer: the body's length is sent, not the body
  /// False: close the connection without answering (the responder is going away).
  bool send = true;
};

/// A text/plain answer that no cache keeps.
server_answer plain_text_answer(unsigned status, std::string body);

/// What a server answers. Called on the server's strand; the server keeps it alive while any
/// connection runs.
class http_responder {
 public:
  virtual ~http_responder() = default;
  /// The answer to a complete request when it can be given at once (no coroutine frame per
  /// request); nullopt when it must wait, and answer_later() is awaited instead.
  virtual std::optional<server_answer> answer_at_once(const server_request& request) = 0;
  /// The answer to a request answer_at_once() left open (a watch): no read deadline runs
  /// meanwhile.
  virtual boost::asio::awaitable<server_answer> answer_later(server_request request) = 0;
  /// The answer to a request that could not be read: 431 (header too large) or 400 (malformed;
  /// `problem` says why).
  virtual server_answer reject(unsigned status, std::string problem) = 0;
  /// The server began to stop: it accepts no more connections.
  virtual void stopping() {}
};

/// Settings of an http_server.
struct http_server_settings {
  std::string name;  ///< "health", "metrics": starts every log line
  boost::asio::ip::tcp::endpoint endpoint;
  /// The server's TLS context; null: plain HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::size_t max_header_bytes = 8 * 1024;
  /// Requests carry no body that matters; a small one is read and ignored.
  std::uint64_t max_body_bytes = 8 * 1024;
  /// A request from its first byte to its last, and writing an answer.
  std::chrono::milliseconds read_timeout{std::chrono::seconds{5}};
  /// From the accept to the end of the first request, TLS handshake included: a connection
  /// that says nothing gives its slot back this soon, not after idle_timeout.
  std::chrono::milliseconds first_request_timeout{std::chrono::seconds{5}};
  /// A keep-alive connection idle this long between requests is closed (after a first one).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds{90}};
  /// Connections not holding a watch beyond this are accepted and closed at once.
  std::size_t max_connections = 256;
  /// Connections from one source address (IPv6: one /64), watches included, beyond this are
  /// accepted and closed at once.
  std::size_t max_connections_per_source = 32;
  /// Watches the responder holds at most (its own cap): counted in the file descriptors the
  /// server needs.
  std::size_t max_watches = 0;
  /// At most one log line per this interval about dropped connections.
  std::chrono::milliseconds dropped_log_interval{std::chrono::seconds{5}};
  logger log;
};

/// Counters of an http_server; callable from any thread.
using http_server_stats = server_stats;

/// Serves one responder on one address, on a strand of the executor. Thread-safe.
class http_server {
 public:
  using stop_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

  http_server(boost::asio::any_io_executor executor, http_server_settings settings,
              std::shared_ptr<http_responder> responder);
  /// Closes the listener and every connection, answering nothing more.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds and listens, then accepts on the executor. Returns the bind error;
  /// asio::error::already_started when called twice; errc::stopped after a stop.
  boost::system::error_code start();
  /// The bound address (the chosen port for port 0); a default endpoint before start().
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  /// Stops accepting, closes connections not answering, lets answers finish; completes
  /// `handler` with success once every connection is closed.
  void stop(stop_handler handler);
  /// True once a stop began: an answer then asks to close the connection.
  bool stopping() const noexcept;
  http_server_stats stats() const;

 private:
  std::shared_ptr<http_server_state> state_;
};

}  // namespace s3lect::inline v1::detail
