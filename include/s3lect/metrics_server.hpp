// A small plain-HTTP server for Prometheus to scrape: `GET /metrics` answers with the text a
// function renders (e.g. prometheus_text(elector) or metrics_registry::render()), and with
// `liveness` set `GET /healthz` and `GET /readyz` for Kubernetes probes; every other path gets 404.
// Bounded like the health server: header size, read timeout, connection count. No Beast here:
// src/metrics/metrics_server.cpp answers, on the server skeleton of src/net/http_server.cpp.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/server_stats.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace s3lect::inline v1 {

namespace detail {
struct metrics_server_state;
}  // namespace detail

/// Settings of a metrics_server. An aggregate: set the fields, then validate().
struct metrics_server_config {
  /// Where to listen: "IPv4:port" or "[IPv6]:port", IP literals only; port 0 picks a free one
  /// (see local_endpoint()). Required.
  std::string bind_address;
  /// The path answered; must start with '/'.
  std::string path = "/metrics";
  /// Renders the body of each answer (Prometheus text). Called on the server's strand; must
  /// not block. Required. An exception it throws is answered with 500 and logged.
  std::function<std::string()> render;
  /// When set, `/healthz` answers 200 while the report is live and 503 when not, and `/readyz`
  /// 200 while it is ready and 503 when not, each with the report's description as the body;
  /// e.g. `[&e] { return e.liveness(); }`. Called like `render`. Unset: both paths get 404.
  std::function<liveness_report()> liveness;

  /// Larger request headers are answered with 431 and the connection closed.
  std::size_t max_header_bytes = 8 * 1024;
  /// Time allowed for a request from its first byte to its last, and for writing an answer.
  std::chrono::milliseconds read_timeout{std::chrono::seconds{5}};
  /// Time from the accept to the end of the first request: a client that connects and says
  /// nothing loses its connection this soon.
  std::chrono::milliseconds first_request_timeout{std::chrono::seconds{5}};
  /// A keep-alive connection idle this long between requests is closed (after a first one).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds{90}};
  /// Connections beyond this are accepted and closed at once.
  std::size_t max_connections = 32;
  /// Connections from one source address (IPv6: one /64) beyond this are accepted and closed
  /// at once, so that one client cannot keep the scraper out.
  std::size_t max_connections_per_source = 8;
  /// Where the server logs; silent by default.
  logger log;

  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  std::optional<std::string> validate() const;
};

/// A standalone HTTP server for `/metrics`, running on the given executor (through a strand)
/// with no threads of its own. No TLS: bind it to an address only your scraper reaches, or
/// serve the metrics from a health_server (HTTPS) instead.
class metrics_server {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config`; throws boost::system::system_error (errc::invalid_config) naming the
  /// offending field. Does not bind: call start().
  metrics_server(executor_type executor, metrics_server_config config);
  /// Closes the listener and every connection; `render` is not called any more.
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// A snapshot of the counters; callable from any thread.
  server_stats stats() const;

  /// The executor given at construction.
  executor_type get_executor() const;

  /// Binds and listens, then accepts connections on the executor. Returns the bind error
  /// (e.g. address_in_use, address_not_available); asio::error::already_started when called
  /// twice. Call once, before async_stop().
  boost::system::error_code start();

  /// The address the server listens on (with the port chosen for port 0); a default endpoint
  /// before a successful start().
  boost::asio::ip::tcp::endpoint local_endpoint() const;

  /// Stops accepting, closes idle connections and lets answers being written finish. Completes
  /// with `void(error_code)` (always success) once every connection is closed, which
  /// read_timeout bounds. Cancellation: not supported.
  template <class CompletionToken = default_token>
  auto async_stop(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_stop{this}, token);
  }

 private:
  using stop_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  void stop_impl(stop_handler handler);

  struct initiate_stop {
    metrics_server* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->stop_impl(stop_handler(std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<detail::metrics_server_state> state_;
};

}  // namespace s3lect::inline v1
