// Who may hold one of a health handler's watches (docs/peer-mode.md#watch-slots). Sans-I/O: the
// handler asks when a watch arrives and reports when one ends; nothing here waits or wakes.
//
// Why: anyone who reaches the port may watch. With only a total cap (64) and the server's 32
// connections per source, two addresses held every slot, and a follower whose watch was refused
// noticed a crashed leader only at its next poll. So:
// - an anonymous client (no verified certificate) holds at most max_per_source watches per
//   source address, so that taking every slot needs max_watchers / max_per_source addresses;
// - when the slots are full, a newcomer from a source holding fewer anonymous watches than the
//   source holding the most takes that source's oldest one (fair shares: a follower holds one);
// - a client that presented a certificate the server verified (mutual TLS against a CA) is not
//   bounded per source, and when the slots are full takes the oldest anonymous watch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

class watch_slots {
 public:
  using ticket = std::uint64_t;

  /// A watch let in (`admitted`), and the held watch it displaced, to be answered now
  /// (`evicted`); neither when refused.
  struct decision {
    std::optional<ticket> admitted;
    std::optional<ticket> evicted;
  };

  watch_slots(std::size_t max_watchers, std::size_t max_per_source)
      : max_watchers_(max_watchers), max_per_source_(max_per_source) {}

  /// A watch from `source` (empty: unknown, bounded by the total only); `verified`: its client
  /// presented a certificate the server verified.
  decision admit(const std::string& source, bool verified);
  /// The watch of `held` ended; nothing for a ticket evicted already.
  void release(ticket held);
  /// Watches held now (evicted ones not counted).
  std::size_t held() const noexcept { return holders_.size(); }

 private:
  struct holder {
    ticket id;
    std::string source;
    bool verified;
  };

  std::size_t anonymous_from(const std::string& source) const;
  /// The oldest anonymous watch to give up for a newcomer, or nothing.
  std::optional<std::size_t> victim_for(const std::string& source, bool verified) const;

  const std::size_t max_watchers_;
  const std::size_t max_per_source_;
  std::vector<holder> holders_;  // oldest first
  ticket next_ = 0;
};

}  // namespace s3lect::inline v1::detail
