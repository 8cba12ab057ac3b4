// The election core's time rules: the expiry rules (b) and (c), the renew deadline, and when
// the next read or renewal is due.
#include "election_core.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {

using std::chrono::milliseconds;

void election_core::enforce_deadline(const instant& now, step& out) {
  if (!holding_ || (in_flight_ && in_flight_->what == purpose::release)) return;
  if (now.steady >= holding_->renewed_at + deadline_of(holding_->renew_deadline)) {
    demote(loss_reason::renew_deadline, out);
  }
}

std::optional<steady_time> election_core::written_by() const {
  // Rule (c): the store's clock dates the write; only its front ends' disagreement
  // (max_clock_skew) is allowed for. No node's wall clock enters.
  if (!config_.max_clock_skew || !observed_ || !observed_->store_stamp) return std::nullopt;
  return *observed_->store_stamp + *config_.max_clock_skew;
}

std::optional<steady_time> election_core::takeover_time() const {
  if (!observed_) return std::nullopt;
  switch (observed_->kind) {
    case observed_kind::absent:
    case observed_kind::released:
    case observed_kind::ours_dead:
      return steady_time::min();  // rule (a), or a record we know nobody leads under
    case observed_kind::malformed:
    case observed_kind::held: {
      // The writer's lease counts if longer than ours: its renew deadline is shorter than it.
      // An unreadable record has no lease of its own: ours.
      const milliseconds writer_lease =
          observed_->record ? observed_->record->lease.value_or(milliseconds{0}) : milliseconds{0};
      const milliseconds lease = std::max(config_.lease, writer_lease);
      // Rule (b): the write was sent before our first read of it completed. Rule (c): the
      // store's clock dates it earlier still.
      steady_time written = observed_->first_seen;
      if (const auto dated = written_by()) written = std::min(written, *dated);
      return written + lease;
    }
  }
  return std::nullopt;
}

bool election_core::takeover_allowed(const instant& now) const {
  if (mode_ != poll_mode::frequent || acquire_in_doubt_) return false;
  if (acquire_not_before_ && now.steady < *acquire_not_before_) return false;
  const auto when = competition_time();
  return when && *when <= now.steady;
}

std::chrono::milliseconds election_core::deadline_of(std::chrono::milliseconds sent_with) const {
  // A lowered D applies at once (demoting earlier is always safe); a raised one only from the
  // first write sent under it, whose record advertises the matching longer lease.
  return std::min(sent_with, config_.renew_deadline);
}

std::optional<steady_time> election_core::leadership_deadline() const noexcept {
  if (!is_leader()) return std::nullopt;
  return holding_->renewed_at + deadline_of(holding_->renew_deadline);
}

steady_time election_core::read_due(const instant& now) const {
  if (read_now_ || !last_read_at_) return now.steady;
  if (reread_) return *last_read_at_ + reread_->gap;
  const milliseconds interval = follower_read_interval();
  return on_clock_probe(*last_read_at_ + interval, interval);
}

bool election_core::reads_first_hand() const {
  return config_.s3_follower_reads == follower_reads::first_hand && !config_.peer.enabled;
}

milliseconds election_core::follower_read_interval() const {
  // Twice per renewal: every renewal is seen within F / 2 of its write, so that rule (b), which
  // counts from our own first sight of the last one, is at most F / 2 late (docs/performance.md).
  if (reads_first_hand()) return std::max(config_.frequent_interval / 2, milliseconds{1});
  return mode_ == poll_mode::stable ? config_.infrequent_interval : config_.frequent_interval;
}

steady_time election_core::renew_due() const {
  const steady_time due =
      on_clock_probe(holding_->renewed_at + config_.frequent_interval, config_.frequent_interval);
  return holding_->retry_at ? std::max(due, *holding_->retry_at) : due;
}

steady_time election_core::on_clock_probe(steady_time due, milliseconds interval) const {
  // Earlier by at most a quarter of the interval and a second: a renewal or read sent early is
  // as safe as one on time. The moments recur every second, so with an interval of 4 s or more
  // every request can be one while they are asked for (a few, until the bound is fine).
  if (!clock_probe_) return due;
  const auto window = std::min<steady_time::duration>(interval / 4, std::chrono::seconds{1});
  const auto since_probe = (due - *clock_probe_) % std::chrono::seconds{1};
  const steady_time probe =
      due - (since_probe < steady_time::duration::zero() ? since_probe + std::chrono::seconds{1}
                                                         : since_probe);
  return due - probe <= window ? probe : due;
}

void election_core::set_clock_probe(std::optional<steady_time> at) {
  clock_probe_ = at;
}

}  // namespace s3lect::inline v1::detail
