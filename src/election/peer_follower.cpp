// A follower's side of peer mode: the peer client built from the elector's settings, and one
// check of the leader's health endpoint, reported to the loop as peer_done.
#include "elector_impl.hpp"

#include <s3lect/error.hpp>
#include <s3lect/retry.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace detail {
namespace {

/// The peer client's settings from the elector's (elector_config::peer onto the client's own
/// fields).
peer_client_config peer_settings(const elector_config& config, const std::string& claim_token) {
  peer_client_config out;
  out.tls = config.peer.tls;
  out.health_path = config.peer.health_path;
  out.timeout = config.peer.timeout;
  out.log = config.log;
  out.claim = candidate_claim_params{config.server_id, config.coordination.priority, claim_token};
  // A server_id the claim cannot carry (control characters) leaves the checks anonymous, as
  // before claims existed: such a node is simply never a verified candidate.
  if (out.validate()) out.claim.reset();
  return out;
}

/// Retries a plain check's transient failures; never a watch, whose failure means "read the
/// store now", which is what the core does next.
struct peer_retry_predicate {
  bool watching = false;
  bool operator()(const error_code& ec) const { return !watching && is_transient(ec); }
};

}  // namespace

bool same_peer_settings(const elector_config& a, const elector_config& b) {
  return a.peer.enabled == b.peer.enabled && a.peer.health_path == b.peer.health_path &&
         a.peer.timeout == b.peer.timeout && a.peer.tls == b.peer.tls &&
         a.server_id == b.server_id && a.coordination.priority == b.coordination.priority;
}

std::shared_ptr<peer_client> make_peer_client(const asio::any_io_executor& executor,
                                              const elector_config& config,
                                              const std::string& claim_token) {
  if (!config.peer.enabled) return nullptr;
  return std::make_shared<peer_client>(executor, peer_settings(config, claim_token));
}

}  // namespace detail

/// One peer check: a plain check under the retry policy (each attempt bounded by peer.timeout
/// inside the client), or a watch, which is not retried. Turns off throw_if_cancelled for the
/// reason given in storage_operations.cpp.
asio::awaitable<void> elector::impl::run_peer_check(std::shared_ptr<impl> self,
                                                    detail::peer_check_request request) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const elector_config config = self->core.config();
  std::shared_ptr<detail::peer_client> client = self->peer;
  if (!client) {
    self->push(detail::peer_done{errc::invalid_config, {}});  // peer mode switched off meanwhile
    co_return;
  }
  std::optional<detail::peer_watch> watch;
  if (request.watch) watch = detail::peer_watch{*request.watch, request.term, request.serial};
  auto attempt = [self, client, address = std::move(request.address),
                  key_pin = std::move(request.key_pin),
                  watch] { return check_attempt(self, client, address, key_pin, watch); };
  const detail::peer_retry_predicate retryable{watch.has_value()};
  auto [ec, answer] = co_await detail::retry_on_elector_clock(config.retry, attempt, retryable);
  if (ec && !watch &&
      (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
    ec = asio::error::operation_aborted;
  }
  if (!ec && answer.leader) self->check_own_listing(answer.record);
  self->push(detail::peer_done{ec, std::move(answer)});
}

asio::awaitable<std::tuple<error_code, detail::peer_answer>> elector::impl::check_attempt(
    std::shared_ptr<impl> self, std::shared_ptr<detail::peer_client> client, std::string address,
    std::string key_pin, std::optional<detail::peer_watch> watch) {
  auto outcome = co_await client->async_check(std::move(address), std::move(key_pin), watch,
                                              asio::as_tuple(asio::use_awaitable));
  self->publisher.count_peer(std::get<0>(outcome), std::get<1>(outcome));
  co_return outcome;
}

}  // namespace s3lect::inline v1
