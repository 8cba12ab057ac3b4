// The elector as a health endpoint's leadership_source (elector::health_source()): an adapter the
// elector owns, so that the elector itself is no leadership_source and its users need not see
// the health server's declarations.
#pragma once

#include "leadership_publisher.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/health.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

class elector_health_source final : public leadership_source {
 public:
  /// `election` and its `publisher` must outlive the source (the elector owns it); `noted`
  /// hears every claim.
  elector_health_source(elector& election, leadership_publisher& publisher,
                        std::function<void(const candidate_claim&)> noted)
      : election_(election), publisher_(publisher), noted_(std::move(noted)) {}

  /// elector::snapshot(): the candidates included.
  leadership_snapshot snapshot() const override;

  /// Hands the claim to the elector's candidate registry.
  void note_candidate(const candidate_claim& claim) override;

  /// The library's zero-configuration default: sets peer.key_pin to `key_pin` and, when
  /// server_address is empty, server_address to reachable_address(bound), through
  /// elector::update_config().
  std::optional<std::string> publish_peer_endpoint(
      std::string_view key_pin, const boost::asio::ip::tcp::endpoint& bound) override;

 private:
  void wait_change_impl(std::uint64_t seen_version,
                        boost::asio::any_completion_handler<change_signature> handler) override;

  elector& election_;
  leadership_publisher& publisher_;
  std::function<void(const candidate_claim&)> noted_;
};

}  // namespace s3lect::inline v1::detail
