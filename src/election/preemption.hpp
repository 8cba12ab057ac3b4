// Preemption (docs/coordination.md#preemption): when a leader hands over to a strictly
// higher-priority candidate, and how a flapping candidate is kept from making leadership flap.
// Pure decisions of the sans-I/O kind; the core acts on them.
#pragma once

#include "boot_clock.hpp"
#include "candidate.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::inline v1::detail {

/// What a leader remembers of its last preemption, across its leaderships: a candidate from
/// which it took leadership back by expiry within two of its settle times "could not keep it" (it
/// crashed or was cut off), and must settle twice as long before it may preempt again. A
/// candidate that released it (a restart, a failing on_acquire hook) is not penalised: it can
/// take leadership back at most once per settle time anyway.
class preemption_memory {
 public:
  /// The most the settle time of one candidate is multiplied by.
  static constexpr unsigned max_factor = 16;

  /// How long `id` must have watched before it may preempt: settle, times its backoff factor.
  std::chrono::milliseconds settle_for(std::string_view id, std::chrono::milliseconds settle) const;
  /// We handed leadership to `id` by preemption at `at`.
  void handed_over(std::string id, boot_clock::time_point at);
  /// We lead again from `at`, by an expiry takeover when `by_expiry`: within two settle times of
  /// handing over to the last target and by expiry, its factor doubles (up to max_factor); after
  /// two settle times, it held on and is forgiven.
  void regained(boot_clock::time_point at, std::chrono::milliseconds settle, bool by_expiry);

 private:
  std::string target_;
  std::optional<boot_clock::time_point> handed_at_;
  unsigned factor_ = 1;
};

/// The candidates a leader of priority `own` may hand over to at `now`, and when to look again.
struct preemption_outlook {
  std::vector<candidate> eligible;  ///< Verified, watching, strictly higher, settled.
  /// When the next candidate of higher priority finishes settling (or our tenure does); nullopt
  /// when there is none to wait for.
  std::optional<boot_clock::time_point> next_check;
};

/// A candidate is eligible when it is verified, holds a watch now, has a priority strictly
/// above `own` (ties never preempt, so two nodes cannot preempt each other), and has watched
/// without a break for settle_for(its id); and only once we have led for `settle` ourselves
/// (`led_since`), so leadership changes hands by preemption at most once per settle time. While
/// a candidate of higher priority than every eligible one is still settling, none is eligible:
/// leadership moves once, to the best, rather than twice.
preemption_outlook preemption_candidates(const std::vector<candidate>& candidates, std::int32_t own,
                                         boot_clock::time_point now,
                                         boot_clock::time_point led_since,
                                         std::chrono::milliseconds settle,
                                         const preemption_memory& memory);

}  // namespace s3lect::inline v1::detail
