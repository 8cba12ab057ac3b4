// Asking a leader's peer-mode health endpoint who leads, from outside an election
// (docs/peer-mode.md#watches): `s3lect status --watch` follows the leader this way instead of
// polling S3. A thin public face of the follower's own peer client; no Beast, OpenSSL or JSON.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/tls.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace s3lect::inline v1 {

namespace detail {
class peer_client;
}  // namespace detail

/// Settings of a leader_endpoint_client. An aggregate: set the fields, then validate().
struct leader_endpoint_config {
  /// ca_file/ca_pem: the CAs a leader's certificate must chain to when no key pin is given
  /// (both empty: the system's trust store); certificate_*/private_key_*: an optional client
  /// certificate for leaders that require mutual TLS. verify_peer must stay true.
  tls_config tls;
  /// Path of the leaders' health endpoint.
  std::string health_path = "/health/leadership";
  /// Bound on connecting, the TLS handshake and an answer, on top of the watch time.
  std::chrono::milliseconds timeout{std::chrono::seconds{3}};

  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  std::optional<std::string> validate() const;
};

/// Why a leader answered a watch.
enum class leader_watch_end {
  changed,   ///< It no longer leads with the watched term (or never did).
  timeout,   ///< The watch time passed with nothing changed.
  not_held,  ///< It did not hold the request (too many watchers, shutting down, or a leader
             ///< without the watch extension): ask S3 rather than again at once.
};

/// What a leader's endpoint said.
struct leader_endpoint_answer {
  bool leads = false;      ///< True on 200: it leads now.
  std::uint64_t term = 0;  ///< The term it holds (leader) or last saw (not leader, when said).
  std::string leader_id;   ///< Who it is (leader) or who it last saw lead (when said).
  leader_watch_end end = leader_watch_end::not_held;  ///< Why the leader answered a watch.
};

/// A client of leaders' health endpoints. Keeps one keep-alive TLS connection to the last
/// leader asked. Runs on a strand of the executor with no threads of its own.
class leader_endpoint_client {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;
  /// Completion signature of async_watch.
  using watch_signature = void(boost::system::error_code, leader_endpoint_answer);

  /// Validates `config` and loads the CAs and certificates; throws boost::system::system_error
  /// (errc::invalid_config) naming the offending field or file.
  leader_endpoint_client(executor_type executor, leader_endpoint_config config);
  /// Pending watches complete with errc::stopped.
  ~leader_endpoint_client();
  leader_endpoint_client(const leader_endpoint_client&) = delete;
  leader_endpoint_client& operator=(const leader_endpoint_client&) = delete;

  /// Asks the endpoint at `leader_addr` (a record's leaderAddr) to answer once it no longer
  /// leads with `term`, or after `duration` (the leader may shorten it). With a non-empty
  /// `key_pin` (a record's peerKeyPin) its certificate is trusted by that pin, otherwise by the
  /// configured CAs and the address. Completes with `void(error_code, leader_endpoint_answer)`;
  /// errors: resolve_failed, connect_failed, tls_verification_failed, tls_handshake_failed,
  /// timeout, connection_lost (also when the leader dies during the watch), protocol_error,
  /// and the other errors of a peer check (docs/peer-mode.md). Cancellation: any type;
  /// completes at once with operation_aborted, the client stays usable.
  template <class CompletionToken = default_token>
  auto async_watch(std::string leader_addr, std::string key_pin, std::uint64_t term,
                   std::chrono::milliseconds duration, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, watch_signature>(
        initiate_watch{this}, token, std::move(leader_addr), std::move(key_pin), term, duration);
  }

 private:
  void watch_impl(std::string leader_addr, std::string key_pin, std::uint64_t term,
                  std::chrono::milliseconds duration,
                  boost::asio::any_completion_handler<watch_signature> handler);

  struct initiate_watch {
    leader_endpoint_client* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string leader_addr, std::string key_pin,
                    std::uint64_t term, std::chrono::milliseconds duration) const {
      self->watch_impl(
          std::move(leader_addr), std::move(key_pin), term, duration,
          boost::asio::any_completion_handler<watch_signature>(std::forward<Handler>(handler)));
    }
  };

  std::unique_ptr<detail::peer_client> client_;
};

}  // namespace s3lect::inline v1
