// What a leader remembers of claims beyond their entries in the candidate_registry
// (docs/peer-mode.md#claims-that-cannot-be-forged): the (id, token) pairs a registration refuted,
// so that evicting or clearing an entry cannot make the same claim be read again before
// rejection_memory, and the pairs a registration confirmed, so that a member is verified at once
// after a leadership change, without a read. Neither is cleared by a reset; both are bounded and
// drop their oldest record first, so a flood of claims costs memory it cannot grow. Not
// thread-safe: the candidate_registry calls it under its lock.
#pragma once

#include "boot_clock.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

class candidate_memory {
 public:
  using time_point = boot_clock::time_point;

  /// Keeps at most `capacity` refuted and `capacity` verified pairs.
  explicit candidate_memory(std::size_t capacity);

  /// A smaller capacity drops the oldest records at once.
  void set_capacity(std::size_t capacity);

  /// The registration refuted (id, token): it is not read again before `until`.
  void refuted(const std::string& id, const std::string& token_sha256, time_point until);

  /// When (id, token) may be read again; nullopt: no refutation remembered, or it ran out.
  std::optional<time_point> refuted_until(const std::string& id, const std::string& token_sha256,
                                          time_point now) const;

  /// The registration confirmed (id, token) claiming `claimed_priority`, at `registered_priority`;
  /// the pairs of `id` with another token it confirmed before are forgotten (it names one token).
  void verified(const std::string& id, const std::string& token_sha256,
                std::int32_t claimed_priority, std::int32_t registered_priority, time_point now);

  /// A claim of (id, token) at `claimed_priority` heard at `now`. Returns the registered priority
  /// of a confirmed pair heard within `lifetime` that claimed the same priority, and keeps it
  /// alive; a pair heard claiming another priority is forgotten (its registration may have
  /// changed with it, so it is read again).
  std::optional<std::int32_t> recall_verified(const std::string& id,
                                              const std::string& token_sha256,
                                              std::int32_t claimed_priority, time_point now,
                                              boot_clock::duration lifetime);

 private:
  struct refuted_pair {
    std::string id;
    std::string token_sha256;
    time_point until{};
  };
  struct verified_pair {
    std::string id;
    std::string token_sha256;
    std::int32_t claimed_priority = 0;
    std::int32_t registered_priority = 0;
    time_point last_heard{};
  };

  void trim();

  std::size_t capacity_;
  std::vector<refuted_pair> refuted_;    // oldest refutation first
  std::vector<verified_pair> verified_;  // least recently heard first
};

}  // namespace s3lect::inline v1::detail
