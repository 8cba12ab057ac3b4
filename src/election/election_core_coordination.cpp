// The election core's coordinated leadership (docs/coordination.md): the hold-offs a follower
// keeps before writing a takeover, and what a leader writes about its succession. Nothing here
// lets a write happen that the expiry rules would not allow: a hold-off only delays one, and the
// successor a release names still needs If-Match on the released record's ETag.
#include "coordination.hpp"
#include "election_core.hpp"
#include "election_core_helpers.hpp"
#include "log_text.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {

using core_helpers::in_ms;

using std::chrono::milliseconds;

void election_core::apply_coordination(observation& seen) {
  if (!seen.record) return;
  const lock_record& record = *seen.record;
  const std::string& self = config_.server_id;
  if (!record.coordination_note.empty()) {
    log(log_level::debug, "lock record: " + record.coordination_note);
  }
  if (seen.kind == observed_kind::held) {
    seen.rank_delay = rank_delay(record, self, config_);
    return;
  }
  if (seen.kind != observed_kind::released) return;
  const std::optional<milliseconds> hold_off = release_hold_off(record, self, config_);
  if (!hold_off) return;
  // The window counts from our first sight of this release, not from each re-read of it.
  const bool seen_before =
      observed_ && observed_->kind == observed_kind::released && observed_->etag == seen.etag;
  if (seen_before) seen.first_seen = observed_->first_seen;
  seen.not_before = seen.first_seen + *hold_off;
  if (seen_before) return;
  if (record.successor == self && record.keep_out != self && acquire_not_before_) {
    // Our own resignation's hold-off lets others go first; the leader has just said that we go
    // first. Cleared once per release: a pause after a write in doubt still paces retries.
    acquire_not_before_.reset();
  }
  log(log_level::info, "release names successor=" + log_text::value(record.successor) +
                           " keep_out=" + log_text::value(record.keep_out) +
                           " hold_off=" + in_ms(*hold_off));
}

void election_core::add_coordination(lock_record& record, bool released) const {
  const coordination_config& coordination = config_.coordination;
  if (coordination.priority != 0 || !candidates_.empty()) record.priority = coordination.priority;
  record.candidates = ranked(candidates_, config_.server_id);
  if (!released) return;
  std::optional<std::string> named = successor_wanted_;
  if (!named) named = best_successor(candidates_, config_.server_id);
  if (!named) return;
  record.successor = *named;
  // A successor that holds no watch on us hears of the release only at its next read of the
  // store, F / 2 to F later on the frequent schedule: the others wait for that too.
  const bool watching = std::any_of(candidates_.begin(), candidates_.end(),
                                    [&](const auto& c) { return c.id == *named && c.watching; });
  const milliseconds window = config_.handover_window();
  const milliseconds unwatched =
      std::min(std::max(window, 2 * config_.frequent_interval), config_.lease);
  record.handover = watching ? window : unwatched;
}

std::optional<steady_time> election_core::competition_time() const {
  std::optional<steady_time> when = takeover_time();
  if (!when || !observed_) return when;
  *when += observed_->rank_delay;
  if (observed_->not_before) *when = std::max(*when, *observed_->not_before);
  return when;
}

}  // namespace s3lect::inline v1::detail
