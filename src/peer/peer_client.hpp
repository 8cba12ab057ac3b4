// The follower's side of peer mode (docs/peer-mode.md#how-it-works): asks the current leader's
// health endpoint over HTTPS whether it still leads, on one keep-alive TLS connection, optionally
// holding the request open with `?watch=<ms>&term=<T>`. Beast-free: the transport is net's
// http_client and the answer's interpretation lives in peer_response.cpp.
#pragma once

#include <s3lect/logger.hpp>
#include <s3lect/storage.hpp>
#include <s3lect/tls.hpp>

#include "peer_response.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace s3lect::inline v1::detail {

struct peer_client_state;

/// Who this follower is, sent with every check and watch so that the leader knows its candidates
/// (docs/peer-mode.md#candidates).
struct candidate_claim_params {
  std::string id;             ///< server_id: 1 .. 1024 bytes.
  std::int32_t priority = 0;  ///< coordination.priority.
  /// 32 lowercase hex digits, secret, fresh for each elector: the leader verifies it against
  /// the SHA-256 in this node's registration. Never logged.
  std::string token;
};

/// Settings of a peer_client. An aggregate: set the fields, then validate().
struct peer_client_config {
  /// ca_file/ca_pem: the CAs the leader's certificate must chain to (both are loaded when both
  /// are set; both empty: the system's default trust store). certificate_*/private_key_*: the
  /// optional client certificate (leaf first) for mutual TLS, each as at most one of file and
  /// PEM text, and only together. The leader's certificate is always verified: verify_peer and
  /// require_client_cert must keep their defaults.
  tls_config tls;
  /// Path of the leader's health endpoint: starts with '/', printable ASCII, no space, '?' or
  /// '#'.
  std::string health_path = "/health/leadership";
  /// Bound on one check: resolve, connect, handshake, write and read. A watch check may take
  /// the watch time on top of it.
  std::chrono::milliseconds timeout{std::chrono::seconds{3}};
  /// Answers with a larger body fail with errc::body_too_large.
  std::size_t max_body_bytes = 64 * 1024;
  /// Where the client logs (one debug line per check, which never shows the claim's token);
  /// silent by default.
  logger log;
  /// Sent as `candidate=<percent-encoded id>&priority=<N>&token=<token>` with every check;
  /// none: the checks say nothing of the follower.
  std::optional<candidate_claim_params> claim;

  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  /// Checks the shape only; unreadable files are reported by the peer_client constructor.
  std::optional<std::string> validate() const;
};

/// `?watch=<duration>&term=<term>[&serial=<serial>]`: hold the request until the leader no
/// longer leads with `term` (or with write `serial`), or `duration` passes.
struct peer_watch {
  std::chrono::milliseconds duration{0};  ///< 0 .. 24 h.
  std::uint64_t term = 0;
  /// `&serial=<serial>`: also end the watch when the leader's write serial differs (each
  /// renewal). A leader that does not know the parameter ignores it.
  std::optional<std::uint64_t> serial;
};

/// Counters of a peer_client, for tests and metrics.
struct peer_client_stats {
  std::uint64_t checks = 0;              ///< async_check calls.
  std::uint64_t requests = 0;            ///< Requests written (a resend counts twice).
  std::uint64_t connections_opened = 0;  ///< TCP connections established.
  std::uint64_t failures = 0;            ///< Checks that completed with an error.
};

/// A client for leaders' health endpoints. Keeps one idle keep-alive connection: reused while
/// checks go to the same leader address, closed when a check goes to another one. Any number
/// of checks may be pending (each beyond the first uses a connection of its own). Thread-safe;
/// runs on a strand of the executor with no threads of its own.
class peer_client {
 public:
  using executor_type = boost::asio::any_io_executor;
  using check_signature = void(boost::system::error_code, peer_answer);

  /// Validates `config` and loads the CAs and the client certificate; throws
  /// boost::system::system_error (errc::invalid_config) naming the offending field.
  peer_client(executor_type executor, peer_client_config config);
  /// Closes the connection; pending checks complete with errc::stopped.
  ~peer_client();
  peer_client(const peer_client&) = delete;
  peer_client& operator=(const peer_client&) = delete;

  /// The executor given at construction.
  executor_type get_executor() const;
  /// The configuration in force.
  const peer_client_config& config() const noexcept;

  /// Asks the health endpoint at `leader_addr` ("host:port", "IPv4:port" or "[IPv6]:port", as
  /// in the record's leaderAddr) whether it leads, verifying its certificate against the CAs
  /// and the host name or IP. With `watch`, the leader may hold the answer for up to
  /// watch->duration; a leader that ignores watches (Go) answers at once (watch == none).
  /// Completes with `void(error_code, peer_answer)`: a 404 is success with leader == false.
  /// Errors (answer.message says more): asio::error::invalid_argument (bad address or watch),
  /// resolve_failed, connect_failed, tls_verification_failed, tls_handshake_failed, timeout
  /// (config().timeout, plus watch->duration for a watch), connection_lost (also when the
  /// leader closes the connection during a watch: reported at once), protocol_error,
  /// body_too_large, and the statuses parse_peer_response maps. errc::stopped after close().
  /// Cancellation: any type (a check has no side effect); completes at once with
  /// operation_aborted, and the client stays usable.
  template <class CompletionToken = default_token>
  auto async_check(std::string leader_addr, std::optional<peer_watch> watch,
                   CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, check_signature>(
        initiate_check{this}, token, std::move(leader_addr), std::string(), watch);
  }

  /// async_check() with zero-configuration TLS when `key_pin` is set (the record's peerKeyPin):
  /// the leader's certificate is trusted when its public key has that pin, instead of by the
  /// CAs and the host name; a mismatch fails with tls_verification_failed.
  template <class CompletionToken = default_token>
  auto async_check(std::string leader_addr, std::string key_pin, std::optional<peer_watch> watch,
                   CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, check_signature>(
        initiate_check{this}, token, std::move(leader_addr), std::move(key_pin), watch);
  }

  /// Closes the idle connection and completes every pending check with errc::stopped. Returns
  /// at once; the client stays usable for later checks.
  void close();

  /// A snapshot of the counters; callable from any thread.
  peer_client_stats stats() const;

 private:
  void check_impl(std::string leader_addr, std::string key_pin, std::optional<peer_watch> watch,
                  boost::asio::any_completion_handler<check_signature> handler);

  struct initiate_check {
    peer_client* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string leader_addr, std::string key_pin,
                    std::optional<peer_watch> watch) const {
      self->check_impl(
          std::move(leader_addr), std::move(key_pin), watch,
          boost::asio::any_completion_handler<check_signature>(std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<peer_client_state> state_;
};

}  // namespace s3lect::inline v1::detail
