#include "elector_health_source.hpp"

#include <utility>

namespace s3lect::inline v1::detail {

leadership_snapshot elector_health_source::snapshot() const {
  return election_.snapshot();
}

void elector_health_source::note_candidate(const candidate_claim& claim) {
  noted_(claim);
}

std::optional<std::string> elector_health_source::publish_peer_endpoint(
    std::string_view key_pin, const boost::asio::ip::tcp::endpoint& bound) {
  elector_config next = election_.config();
  // A server with a certificate of its own has no pin: the one configured, if any, stays.
  if (!key_pin.empty()) next.peer.key_pin = std::string(key_pin);
  // An address the user set wins: behind NAT no interface carries the one the others use.
  if (next.server_address.empty()) next.server_address = reachable_address(bound);
  return election_.update_config(std::move(next));
}

void elector_health_source::wait_change_impl(
    std::uint64_t seen_version, boost::asio::any_completion_handler<change_signature> handler) {
  publisher_.wait_for_health_change(seen_version, std::move(handler));
}

}  // namespace s3lect::inline v1::detail
