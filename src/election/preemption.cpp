#include "preemption.hpp"

#include <algorithm>
#include <utility>

namespace s3lect::inline v1::detail {

using std::chrono::milliseconds;

milliseconds preemption_memory::settle_for(std::string_view id, milliseconds settle) const {
  return id == target_ ? settle * factor_ : settle;
}

void preemption_memory::handed_over(std::string id, boot_clock::time_point at) {
  if (id != target_) factor_ = 1;
  target_ = std::move(id);
  handed_at_ = at;
}

void preemption_memory::regained(boot_clock::time_point at, milliseconds settle, bool by_expiry) {
  if (!handed_at_) return;
  const bool kept_it = at - *handed_at_ >= 2 * settle_for(target_, settle);
  if (kept_it) {
    factor_ = 1;
  } else if (by_expiry) {
    factor_ = std::min(factor_ * 2, max_factor);
  }
  handed_at_.reset();
}

preemption_outlook preemption_candidates(const std::vector<candidate>& candidates, std::int32_t own,
                                         boot_clock::time_point now,
                                         boot_clock::time_point led_since, milliseconds settle,
                                         const preemption_memory& memory) {
  preemption_outlook out;
  const boot_clock::time_point tenure_done = led_since + settle;
  std::optional<std::int32_t> best_eligible, best_settling;
  for (const candidate& c : candidates) {
    if (!c.verified || !c.watching || c.priority <= own) continue;
    const boot_clock::time_point ready =
        std::max(c.watching_since + memory.settle_for(c.id, settle), tenure_done);
    if (ready <= now) {
      out.eligible.push_back(c);
      best_eligible = std::max(best_eligible.value_or(c.priority), c.priority);
    } else {
      best_settling = std::max(best_settling.value_or(c.priority), c.priority);
      if (!out.next_check || ready < *out.next_check) out.next_check = ready;
    }
  }
  // A better candidate still settling is waited for: handing over to the second best now would
  // move leadership twice (and the second move only after the new leader's tenure).
  if (best_eligible && best_settling && *best_settling > *best_eligible) out.eligible.clear();
  return out;
}

}  // namespace s3lect::inline v1::detail
