// The one HTTP client of s3lect (S3, the credential endpoints, the peer health checks): HTTP/1.1
// over TCP or TLS to one host, with a small keep-alive pool, replay on a connection the server
// closed while idle, and one classification of transport failures. The only client translation
// unit that includes Beast and OpenSSL; this interface is free of both.
#pragma once

#include <s3lect/logger.hpp>
#include <s3lect/tls.hpp>

#include "tls_context.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// Receives a 2xx reply's body chunk by chunk; an error stops the read with that error.
using reply_chunk_sink = std::function<boost::system::error_code(std::string_view chunk)>;

/// One request, already signed. The transport adds Content-Length and nothing else.
struct http_request {
  std::string method;  ///< "GET", "PUT", "DELETE"
  std::string target;  ///< encoded path
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Set: the body is `body` followed by `body_file_size` bytes of this file from byte
  /// `body_file_offset` on, read in chunks as the socket takes them (memory does not grow with
  /// the file).
  std::string body_file;
  std::uint64_t body_file_size = 0;
  std::uint64_t body_file_offset = 0;
  /// Set: a 2xx reply's body goes here instead of http_response::body, with no size limit.
  reply_chunk_sink reply_sink;
  /// Without a sink: a body over max_body_bytes ends the read there with
  /// http_response::truncated set (the headers and the first max_body_bytes bytes kept)
  /// instead of failing with body_too_large.
  bool truncate_long_reply = false;
  /// Called each time body bytes move in either direction (a streamed transfer's progress).
  std::function<void()> on_progress;
};

/// One complete reply.
struct http_response {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// The body stopped at max_body_bytes (http_request::truncate_long_reply): there was more.
  bool truncated = false;

  /// The first header named `name` (case-insensitive), or an empty view.
  std::string_view header(std::string_view name) const;
};

/// Whether a request may be sent again on a new connection after an idle keep-alive connection
/// turned out to be closed by the server.
enum class replay_policy {
  /// GET and DELETE: resent whenever the reused connection failed before any reply byte.
  idempotent,
  /// Conditional PUT: resent only if its bytes certainly did not all leave (the write failed);
  /// a failure after a complete write is ambiguous and reported as such.
  unless_written,
  /// Never resent: a long poll (a peer watch), where a closed connection is the news itself.
  never,
};

/// State one request shares between its owner (which enforces the timeout and cancellation) and
/// the transport. Only touched on the request's strand.
class request_control {
 public:
  /// True once abort() was called: the transport starts no further I/O.
  bool aborted() const noexcept { return aborted_; }

  /// Interrupts the I/O in flight (closes the socket or cancels the resolver).
  void abort() {
    aborted_ = true;
    if (hook_) {
      auto hook = std::move(hook_);
      hook_ = nullptr;
      hook();
    }
  }

  /// Installs what abort() runs while an I/O step is pending; nullptr removes it.
  void set_abort_hook(std::function<void()> hook) { hook_ = std::move(hook); }

  /// True from the moment the request's first byte may have been handed to a socket until a
  /// failed write proves it was not delivered whole. A PUT that fails while this is set may have
  /// been committed by the store.
  bool may_be_delivered = false;

  /// What the transport is doing ("resolving", "connecting", "handshaking", "sending the
  /// request", then `waiting_phase`), for the owner's timeout message.
  const char* phase = "starting";
  /// The phase while the reply is awaited; a long poll names it after what it waits for.
  const char* waiting_phase = "waiting for the answer";

 private:
  bool aborted_ = false;
  std::function<void()> hook_;
};

/// The result of sending one request: a complete reply, or a transport failure.
struct exchange_result {
  /// Empty when `response` is a complete reply; else resolve_failed, connect_failed,
  /// tls_handshake_failed (also a TLS 1.3 server refusing our certificate, or its absence,
  /// after the handshake), tls_verification_failed, connection_lost, protocol_error or
  /// body_too_large. Timeouts and cancellation are the owner's business (see request_control).
  boost::system::error_code error;
  std::string detail;  ///< what failed, for response_info::message and logs
  http_response response;
  std::chrono::microseconds round_trip{0};  ///< from the start of the write to the last byte
};

/// Counters of one or more http_clients (a peer client replaces its http_client when the
/// leader moves and keeps counting).
struct http_client_counters {
  std::atomic<std::uint64_t> connections_opened{0};  ///< TCP connections established
  std::atomic<std::uint64_t> requests_sent{0};       ///< writes started (a resend counts twice)
};

/// Where and how to connect.
struct http_client_settings {
  std::string host;  ///< resolved, SNI (names only) and the certificate's expected name or IP
  std::uint16_t port = 443;
  bool tls = true;
  tls_config tls_settings;
  /// How the owner's configuration names its tls_config, for errors ("tls." + "ca_file").
  std::string tls_field_prefix = "tls.";
  /// Set: the server's certificate is trusted when its public key has this pin
  /// (tls_identity.hpp), whatever signed it and whatever names it; the context must not verify
  /// (tls_settings.verify_peer off). Empty: verified by the context's CAs and `host`.
  std::string key_pin;
  /// A context built already (make_shared_tls_context), shared with other clients; null: one
  /// is built from tls_settings.
  std::shared_ptr<boost::asio::ssl::context> tls_context;
  std::size_t max_body_bytes = 1024 * 1024;
  /// Reply headers are a few hundred bytes; anything near this is not the expected server.
  std::uint32_t max_header_bytes = 64 * 1024;
  std::size_t max_idle_connections = 4;
  /// Names the client in its log lines ("s3", "peer").
  std::string name = "s3";
  logger log;
  /// Shared counters; null: the client keeps its own.
  std::shared_ptr<http_client_counters> counters;
};

/// Sends requests over pooled keep-alive connections to one host. Thread-safe.
class http_client {
 public:
  /// Throws boost::system::system_error(errc::invalid_config), naming the field through
  /// settings.tls_field_prefix, when the CAs or the client certificate cannot be loaded.
  http_client(boost::asio::any_io_executor executor, http_client_settings settings);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Sends `request` on an idle connection or a new one and reads the reply. Must be awaited on
  /// `control`'s strand; returns early, with an unspecified result, once control->abort() ran.
  boost::asio::awaitable<exchange_result> exchange(std::shared_ptr<request_control> control,
                                                   http_request request, replay_policy replay);

  /// Closes the idle connections.
  void close_idle();

  /// TCP connections opened so far.
  std::uint64_t connections_opened() const noexcept;
  /// Requests written so far (a resend counts twice).
  std::uint64_t requests_sent() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace s3lect::inline v1::detail
