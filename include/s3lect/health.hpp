// The peer-mode health endpoint (docs/peer-mode.md#the-endpoint): a leader answers `GET
// /health/leadership` with its last successful lock record, followers hold a `?watch=` request open
// to hear of a release at once. Three layers: leadership_source (what the endpoint asks; an
// elector provides one, elector::health_source()), health_handler (request to response, usable
// inside any HTTP server) and health_server (a standalone HTTPS server). No Beast, OpenSSL or
// JSON here; see beast_handler.hpp to embed the handler in a Beast server.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/leadership.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/server_stats.hpp>
#include <s3lect/tls.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1 {

namespace detail {
struct health_handler_state;
struct health_server_state;
}  // namespace detail

/// What a follower says of itself in a check or watch (docs/peer-mode.md#candidates), as the
/// health handler reports it to its source. A claim proves nothing by itself: the source must
/// verify it before it decides anything.
struct candidate_claim {
  /// What a claim reports.
  enum class kind {
    check,        ///< Any read or watch request (a held watch adds watch_begin and watch_end).
    watch_begin,  ///< A watch is held from now on.
    watch_end,    ///< The watch `watch_id` ended (answered, evicted, stopped or cancelled).
  };
  kind event = kind::check;   ///< The kind of request the claim came with.
  std::string id;             ///< The claimed server_id.
  std::int32_t priority = 0;  ///< The claimed priority.
  std::string token;          ///< The claimant's secret (32 hex); never log it.
  std::string source;         ///< health_request::source.
  /// health_request::verified_client, and the certificate names the claimed id
  /// (health_request::client_names): the certificate vouches for the claim.
  bool verified_client = false;
  std::uint64_t watch_id = 0;  ///< Pairs a watch_begin with its watch_end; unused for a check.
};

/// Where the health endpoint gets its answers from: elector::health_source() for an elector.
/// Every function may be called from any thread.
class leadership_source {
 public:
  /// Completion signature of async_wait_for_change.
  using change_signature = void(boost::system::error_code);

  virtual ~leadership_source() = default;

  /// A consistent snapshot of the current state. Must not block.
  virtual leadership_snapshot snapshot() const = 0;

  /// Called by a health_server in zero-configuration TLS (no certificate configured), or with
  /// health_server_config::publish_endpoint, once it listens: `key_pin` is the public_key_pin()
  /// of the self-signed certificate it made (empty with a certificate of its own), `bound` its
  /// local_endpoint(). An elector's source publishes both (elector::health_source()); the
  /// default does nothing. Returns nullopt, or why they could not be published.
  virtual std::optional<std::string> publish_peer_endpoint(
      std::string_view key_pin, const boost::asio::ip::tcp::endpoint& bound) {
    (void)key_pin;
    (void)bound;
    return std::nullopt;
  }

  /// Called for every read and watch whose query carries a well-formed claim, and for the end of
  /// every such watch (each watch_begin is followed by exactly one watch_end). Must not block.
  /// An elector's source keeps its candidates from these; the default does nothing.
  virtual void note_candidate(const candidate_claim& claim) { (void)claim; }

  /// Waits until snapshot().version exceeds `seen_version` (at once if it already does).
  /// Completes with `void(error_code)`. Cancellation: any type; operation_aborted.
  template <class CompletionToken = default_token>
  auto async_wait_change(std::uint64_t seen_version, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, change_signature>(
        initiate_wait_change{this}, token, seen_version);
  }

 protected:
  /// Starts a wait; must complete `handler` exactly once, never inline, and honour any type of
  /// cancellation emitted on its slot.
  virtual void wait_change_impl(std::uint64_t seen_version,
                                boost::asio::any_completion_handler<change_signature> handler) = 0;

 private:
  struct initiate_wait_change {
    leadership_source* self;
    template <class Handler>
    void operator()(Handler&& handler, std::uint64_t seen_version) const {
      self->wait_change_impl(seen_version, boost::asio::any_completion_handler<change_signature>(
                                               std::forward<Handler>(handler)));
    }
  };
};

/// Settings of the health endpoint itself, shared by health_handler and health_server.
struct health_handler_config {
  /// The endpoint's path; other paths get 404. Must start with '/', no query or fragment.
  std::string path = "/health/leadership";
  /// Watches held at once; beyond this a watch is answered at once (`refused`), or takes the
  /// slot of an anonymous one (docs/peer-mode.md#watch-slots). 0 disables watching.
  std::size_t max_watchers = 64;
  /// Watches held at once from one source address (health_request::source) by clients
  /// without a verified certificate: taking every slot then needs max_watchers / this many
  /// addresses. 0: only verified clients may watch.
  std::size_t max_watchers_per_source = 8;
  /// Longer watches are shortened to this; 0 disables watching.
  std::chrono::milliseconds max_watch{std::chrono::seconds{60}};

  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  std::optional<std::string> validate() const;
};

/// An HTTP request as the health endpoint needs it.
struct health_request {
  std::string method;  ///< e.g. "GET"; compared case-sensitively, as HTTP requires.
  std::string target;  ///< The request target, e.g. "/health/leadership?watch=30000&term=7".
  /// Who asks, for the watch slots (docs/peer-mode.md#watch-slots): the client's address (an
  /// IPv6 client's /64), e.g. "192.0.2.7" or "2001:db8:1:2::/64". Empty: unknown, its watches
  /// bounded by the total only. health_server fills it in; an embedding server may. (The
  /// `{}` keeps `{method, target}` free of -Wmissing-field-initializers.)
  std::string source{};
  /// The client presented a certificate the server verified (mutual TLS against a CA): its
  /// watches are not bounded per source and take an anonymous watch's slot when all are held.
  bool verified_client = false;
  /// The verified certificate's names: its subject alternative names of type DNS and URI and
  /// its common names. A claim the request carries is vouched for by the certificate only for
  /// an id among them (candidate_claim::verified_client); any other is checked against its
  /// registration like an anonymous claim. health_server fills it in; an embedding server may.
  std::vector<std::string> client_names{};
};

/// The answer to a health_request. The caller adds framing (Content-Length, Connection).
struct health_response {
  unsigned status = 200;  ///< The HTTP status: 200 leader, 404 not leader, 4xx a refused request.
  /// Content-Type, Cache-Control, and depending on the answer Allow and X-S3lect-Watch.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  ///< Always a JSON object.
};

/// Turns health requests into responses for one leadership_source, holding watch requests until
/// the leadership changes. Usable inside any HTTP server. Thread-safe. The source must outlive
/// the handler; destroying the handler completes its pending operations with errc::stopped.
class health_handler {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;
  /// Completion signature of async_handle.
  using handle_signature = void(boost::system::error_code, health_response);

  /// Validates `config`; throws boost::system::system_error (errc::invalid_config) naming the
  /// offending field. Watches run on a strand of `executor`.
  health_handler(executor_type executor, leadership_source& source,
                 health_handler_config config = {});
  ~health_handler();
  health_handler(const health_handler&) = delete;
  health_handler& operator=(const health_handler&) = delete;

  /// The executor given at construction.
  executor_type get_executor() const;
  /// The configuration in force.
  const health_handler_config& config() const noexcept;

  /// Answers at once, as to a plain GET: a watch request's parameters are checked (400 when
  /// bad) but the request is not held. For servers that cannot wait.
  health_response handle(const health_request& request) const;

  /// Answers `request`, holding a watch until the source is no longer "leader with the watched
  /// term", the watch time passes, or stop() is called. Completes with
  /// `void(error_code, health_response)`; the error is set only when the handler was destroyed
  /// (errc::stopped, with a 503 response) or on cancellation. Cancellation: any type;
  /// completes with operation_aborted and an empty response, the handler unaffected.
  template <class CompletionToken = default_token>
  auto async_handle(health_request request, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, handle_signature>(
        initiate_handle{this}, token, std::move(request));
  }

  /// Answers every pending watch at once with the current state, and every later one without
  /// holding it: for a graceful shutdown. Returns at once; the answers are posted.
  void stop();

  /// Number of watches being held now.
  std::size_t active_watches() const noexcept;

 private:
  friend class health_server;

  void handle_impl(health_request request,
                   boost::asio::any_completion_handler<handle_signature> handler);
  /// Stops using the source: pending operations complete with errc::stopped.
  void detach();

  struct initiate_handle {
    health_handler* self;
    template <class Handler>
    void operator()(Handler&& handler, health_request request) const {
      self->handle_impl(std::move(request), boost::asio::any_completion_handler<handle_signature>(
                                                std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<detail::health_handler_state> state_;
};

/// Settings of a standalone health server. An aggregate: set the fields, then validate().
struct health_server_config {
  /// Where to listen: "IPv4:port" or "[IPv6]:port", IP literals only; port 0 picks a free one
  /// (see local_endpoint()). Required.
  std::string bind_address;

  /// The server's certificate chain (leaf first) and its unencrypted private key: exactly one
  /// of the file and the PEM text each, or none of the four: zero-configuration TLS
  /// (docs/peer-mode.md#zero-configuration-tls), where the constructor makes a fresh EC P-256
  /// key and a self-signed certificate in memory and start() hands its pin and address to the
  /// source (leadership_source::publish_peer_endpoint). CAs (ca_file and/or ca_pem): client
  /// certificates must chain to them; when set, a client certificate that does not verify is
  /// refused even without require_client_cert. require_client_cert (mutual TLS) needs a CA.
  /// verify_peer is for clients and ignored here.
  tls_config tls;
  /// With a certificate of its own too, start() hands the source where it listens
  /// (leadership_source::publish_peer_endpoint, with no pin): an elector whose server_address
  /// is empty then advertises reachable_address() of it, which the certificate must name. Off:
  /// only zero-configuration TLS publishes.
  bool publish_endpoint = false;

  /// Larger request headers are answered with 431 and the connection closed.
  std::size_t max_header_bytes = 8 * 1024;
  /// Time allowed for a request from its first byte to its last, and for writing an answer:
  /// a client dribbling bytes (slowloris) is cut off after this.
  std::chrono::milliseconds read_timeout{std::chrono::seconds{5}};
  /// Time from the accept to the end of the first request, TLS handshake included: a client
  /// that connects and says nothing loses its connection this soon
  /// (docs/peer-mode.md#a-hostile-client).
  std::chrono::milliseconds first_request_timeout{std::chrono::seconds{5}};
  /// A keep-alive connection idle this long between requests is closed (after a first one).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds{90}};
  /// Connections not holding a watch beyond this are accepted and closed at once (counted as
  /// rejected). Watches are bounded by handler.max_watchers instead.
  std::size_t max_connections = 256;
  /// Connections from one source address (IPv6: one /64), watches included, beyond this are
  /// accepted and closed at once: one client cannot hold every slot.
  std::size_t max_connections_per_source = 32;

  /// The endpoint's path and watch limits.
  health_handler_config handler;
  /// Renders the body of `GET /metrics` (Prometheus text, e.g. prometheus_text(elector) from
  /// metrics.hpp). Empty: no /metrics route (404). Called on the server's strand, never after
  /// the server's destruction began; must not block. A throw is answered with 500 and logged.
  std::function<std::string()> metrics;
  /// The path of the metrics route.
  static constexpr std::string_view metrics_path = "/metrics";
  /// Where the server logs; silent by default.
  logger log;

  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  /// Checks the shape of the settings only; unreadable certificate files are reported by the
  /// health_server constructor.
  std::optional<std::string> validate() const;
};

/// The address followers should use to reach a server bound to `bound` (its local_endpoint()),
/// as elector_config::server_address: `bound` itself when it is a specific IP; for 0.0.0.0 or
/// [::], the first non-loopback IPv4 address of an interface that is up (then, for [::], the
/// first such IPv6 address that is not link-local), else 127.0.0.1. Behind NAT or in a
/// container, where no interface has the address others use, set server_address yourself.
std::string reachable_address(const boost::asio::ip::tcp::endpoint& bound);

/// Counters of a health server, for tests and metrics (server_stats.hpp).
using health_server_stats = server_stats;

/// A standalone HTTPS server for the health endpoint (TLS 1.2 or later, optional mutual TLS),
/// running on the given executor (through a strand) with no threads of its own.
class health_server {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config` and loads the certificates and keys; throws
  /// boost::system::system_error (errc::invalid_config) naming the offending field. Does not
  /// bind: call start(). `source` must outlive the server.
  health_server(executor_type executor, leadership_source& source, health_server_config config);
  /// Closes the listener and every connection without answering pending watches (use
  /// async_stop() for that). Pending internal work finishes without touching `source`.
  ~health_server();
  health_server(const health_server&) = delete;
  health_server& operator=(const health_server&) = delete;

  /// The executor given at construction.
  executor_type get_executor() const;

  /// Binds and listens, then accepts connections on the executor. In zero-configuration TLS it
  /// then calls the source's publish_peer_endpoint() (an elector writes the pin into its
  /// records from then on: start the server before the elector); a refusal is logged as a
  /// warning. Returns the bind error
  /// (e.g. address_in_use, address_not_available, access_denied) instead of swallowing it;
  /// asio::error::already_started when called twice. Call once, before async_stop().
  boost::system::error_code start();

  /// The address the server listens on (with the port chosen for port 0); a default endpoint
  /// before a successful start().
  boost::asio::ip::tcp::endpoint local_endpoint() const;

  /// Stops gracefully: stops accepting, answers pending watches with the current state (with
  /// `Connection: close`), closes idle connections and lets those mid-answer finish. Completes
  /// with `void(error_code)` (always success) once every connection is closed, which
  /// read_timeout bounds. Cancellation: not supported.
  template <class CompletionToken = default_token>
  auto async_stop(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_stop{this}, token);
  }

  /// A snapshot of the counters; callable from any thread.
  health_server_stats stats() const;

 private:
  using stop_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  void stop_impl(stop_handler handler);

  struct initiate_stop {
    health_server* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->stop_impl(stop_handler(std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<detail::health_server_state> state_;
};

}  // namespace s3lect::inline v1
