// This node's wall clock against the store's, as an elector's status reports it and as one
// answer of the store tells it (clock_offset_of).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <chrono>
#include <optional>

namespace s3lect::inline v1 {

struct response_info;

/// This node's wall clock against the store's, measured from the `Date` of the store's answers.
/// Informational: no election decision depends on any node's wall clock.
struct store_clock_offset {
  /// The store's clock minus this node's wall clock: −300 s for a node whose clock is five
  /// minutes ahead of the store's.
  std::chrono::microseconds offset{0};
  /// The true offset lies within offset ± error_bound (for a store whose Date is truncated
  /// to the second, as HTTP dates are).
  std::chrono::microseconds error_bound{0};
};

/// This machine's wall clock against the store's from one answer whose last byte arrived at
/// `received` (this machine's clock): nullopt when it has no `Date`. With `Date` in whole
/// seconds the bound is half a second plus half the round trip; an elector refines it over many
/// answers (leadership_status::clock_offset). response_info is declared in storage.hpp.
std::optional<store_clock_offset> clock_offset_of(const response_info& answer,
                                                  std::chrono::system_clock::time_point received);

}  // namespace s3lect::inline v1
