// Preemption (docs/coordination.md#preemption): a leader that sees a verified candidate of
// strictly higher priority settled on its endpoint hands over to it, or advises the application
// to. Handing over is a resignation: the loss is reported first, then the released record is
// written with If-Match on our last ETag, so it adds no way to lead (safety-and-fencing.md).
#include "election_core.hpp"

#include "coordination.hpp"
#include "election_core_helpers.hpp"
#include "hold_offs.hpp"
#include "log_text.hpp"

namespace s3lect::inline v1::detail {

bool election_core::may_preempt() const {
  return holding_ && holding_->reported && !release_wanted_ && !stop_wanted_ &&
         config_.coordination.preempt != preemption::off;
}

preemption_outlook election_core::preemption_view(const instant& now) const {
  return preemption_candidates(candidates_, config_.coordination.priority, now.steady,
                               holding_->report_at, config_.settle_time(), preemption_);
}

void election_core::consider_preemption(const instant& now, step& out) {
  if (!may_preempt()) return;
  const std::optional<std::string> best =
      best_successor(preemption_view(now).eligible, config_.server_id);
  if (!best) return;
  const std::string& target = *best;
  const std::uint64_t term = holding_->term;
  if (config_.coordination.preempt == preemption::advise) {
    if (advised_ && advised_->first == term && advised_->second == target) return;
    advised_ = {term, target};
    out.notices.emplace_back(handover_advised{term, target});
    log(log_level::info,
        "handover advised term=" + std::to_string(term) + " successor=" + log_text::value(target));
    return;
  }
  preemption_.handed_over(target, now.steady);
  acquire_not_before_ = now.steady + resign_hold_off(config_);
  release_wanted_ = true;
  successor_wanted_ = target;
  report_loss(loss_reason::preempted, out);
  log(log_level::info,
      "preempted term=" + std::to_string(term) + " successor=" + log_text::value(target));
}

std::optional<steady_time> election_core::preemption_wake(const instant& now) const {
  if (!may_preempt()) return std::nullopt;
  return preemption_view(now).next_check;
}

}  // namespace s3lect::inline v1::detail
