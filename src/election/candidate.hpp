// A follower the leader knows as a candidate for its succession (docs/coordination.md): what the
// leader's peer endpoint learnt from its checks and watches, fed to the core as a list.
#pragma once

#include "boot_clock.hpp"

#include <cstdint>
#include <string>

namespace s3lect::inline v1::detail {

struct candidate {
  std::string id;             ///< The follower's server_id, as it claimed it.
  std::int32_t priority = 0;  ///< Its priority: the registered one once verified.
  /// The start of its unbroken run of watches on the leader's boot clock (or its first check).
  boot_clock::time_point watching_since{};
  bool watching = false;  ///< A watch of it is held now.
  /// Only a member could have made this claim (a client certificate in CA mode, or a token
  /// matching the candidate's registration in the bucket). Unverified entries decide nothing.
  bool verified = false;

  friend bool operator==(const candidate&, const candidate&) = default;
};

}  // namespace s3lect::inline v1::detail
