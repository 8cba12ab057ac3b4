#include "candidate_memory.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {

namespace {

template <typename Pairs>
auto find_pair(Pairs& pairs, const std::string& id, const std::string& token_sha256) {
  return std::find_if(pairs.begin(), pairs.end(),
                      [&](const auto& p) { return p.token_sha256 == token_sha256 && p.id == id; });
}

/// Drops the record that `older` orders first until at most `capacity` are left.
template <typename Pairs, typename Older>
void drop_oldest(Pairs& pairs, std::size_t capacity, Older older) {
  while (pairs.size() > capacity) pairs.erase(std::min_element(pairs.begin(), pairs.end(), older));
}

}  // namespace

candidate_memory::candidate_memory(std::size_t capacity) : capacity_(capacity) {}

void candidate_memory::set_capacity(std::size_t capacity) {
  capacity_ = capacity;
  trim();
}

void candidate_memory::trim() {
  drop_oldest(refuted_, capacity_,
              [](const refuted_pair& a, const refuted_pair& b) { return a.until < b.until; });
  drop_oldest(verified_, capacity_, [](const verified_pair& a, const verified_pair& b) {
    return a.last_heard < b.last_heard;
  });
}

void candidate_memory::refuted(const std::string& id, const std::string& token_sha256,
                               time_point until) {
  // A refuted pair is no longer a confirmed one: its registration now names another token.
  if (const auto known = find_pair(verified_, id, token_sha256); known != verified_.end()) {
    verified_.erase(known);
  }
  if (const auto known = find_pair(refuted_, id, token_sha256); known != refuted_.end()) {
    known->until = std::max(known->until, until);
    return;
  }
  refuted_.push_back({id, token_sha256, until});
  trim();
}

std::optional<candidate_memory::time_point> candidate_memory::refuted_until(
    const std::string& id, const std::string& token_sha256, time_point now) const {
  const auto known = find_pair(refuted_, id, token_sha256);
  if (known == refuted_.end() || known->until <= now) return std::nullopt;
  return known->until;
}

void candidate_memory::verified(const std::string& id, const std::string& token_sha256,
                                std::int32_t claimed_priority, std::int32_t registered_priority,
                                time_point now) {
  if (const auto known = find_pair(refuted_, id, token_sha256); known != refuted_.end()) {
    refuted_.erase(known);
  }
  const auto known = find_pair(verified_, id, token_sha256);
  if (known != verified_.end()) {
    *known = {id, token_sha256, claimed_priority, registered_priority, now};
    return;
  }
  verified_.push_back({id, token_sha256, claimed_priority, registered_priority, now});
  trim();
  // A registration names one token: the pairs it confirmed for `id` before are its no longer.
  std::erase_if(verified_, [&](const verified_pair& pair) {
    return pair.id == id && pair.token_sha256 != token_sha256;
  });
}

std::optional<std::int32_t> candidate_memory::recall_verified(const std::string& id,
                                                              const std::string& token_sha256,
                                                              std::int32_t claimed_priority,
                                                              time_point now,
                                                              boot_clock::duration lifetime) {
  const auto known = find_pair(verified_, id, token_sha256);
  if (known == verified_.end()) return std::nullopt;
  if (known->claimed_priority != claimed_priority || now - known->last_heard > lifetime) {
    verified_.erase(known);
    return std::nullopt;
  }
  known->last_heard = now;
  return known->registered_priority;
}

}  // namespace s3lect::inline v1::detail
