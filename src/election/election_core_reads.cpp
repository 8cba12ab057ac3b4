// The election core reading the lock: what a read shows (absent, released, ours, another
// holder's, unreadable), and the follower's poll mode.
#include "election_core.hpp"
#include "election_core_helpers.hpp"
#include "log_text.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>

namespace s3lect::inline v1::detail {

using namespace core_helpers;

using std::chrono::milliseconds;

namespace {

// What the `Date` and `Last-Modified` headers may each be off by: both show whole seconds, and
// a store may truncate or round them. One second per header, whichever way it rounds.
constexpr std::chrono::seconds http_date_resolution{2};

/// Rule (c)'s evidence from one read: the read's completion less the least time the store's
/// clock says has passed since the object was written (Date − Last-Modified − resolution).
/// Adding max_clock_skew gives a time by which the write had certainly happened. Unset when the
/// store omitted either header.
std::optional<steady_time> store_stamp_of(const instant& now, const get_result& result) {
  if (!result.found || !result.found->last_modified || !result.info.server_date) {
    return std::nullopt;
  }
  // Bounded so that a nonsensical date (year 1 or 9999) cannot overflow the arithmetic; a
  // year exceeds any lease by far, so the bound changes no decision.
  constexpr std::chrono::hours bound{24 * 366};
  const auto store_age =
      std::clamp<std::chrono::system_clock::duration>(
          *result.info.server_date - *result.found->last_modified, -bound, bound) -
      http_date_resolution;
  return now.steady - std::chrono::duration_cast<steady_time::duration>(store_age);
}

std::optional<steady_time> earliest(std::optional<steady_time> a, std::optional<steady_time> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

step election_core::on_read_done(const instant& now, const boost::system::error_code& ec,
                                 const get_result& result) {
  step out;
  if (!in_flight_ || in_flight_->what != purpose::read) return finish(now, std::move(out));
  const bool cancelled = cancel_sent_ && ec == boost::asio::error::operation_aborted;
  in_flight_.reset();
  cancel_sent_ = false;
  last_election_time_ = now.wall;
  enforce_deadline(now, out);
  if (cancelled) {
    // Cancelled by a demotion or a stop: whatever comes next decides when to read again.
    if (stop_wanted_) acquire_in_doubt_ = false;
    return finish(now, std::move(out));
  }
  last_read_at_ = now.steady;
  read_now_ = false;
  if (ec) {
    note_failure(ec, result.info);
    count_refusal(refused_reads_, ec);
    log(log_level::warning, "read failed error=" + log_text::value(last_error_));
    step_down_if_clock_refused(ec, out);
    if (mode_ == poll_mode::stable)
      log(log_level::info, "back to frequent mode reason=read_failed");
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    if (holding_ && holding_->verify_pending) {
      holding_->verify_pending = false;
      holding_->retry_at = now.steady + renew_retry_pause();
    }
    if (stop_wanted_) acquire_in_doubt_ = false;
    reread_.reset();  // the store is failing: the usual pace, not more requests
    return finish(now, std::move(out));
  }
  consecutive_failures_ = 0;
  refused_reads_ = 0;
  peer_.view_stale = false;
  observe(now, result, out);
  continue_reread_burst();
  return finish(now, std::move(out));
}

void election_core::observe(const instant& now, const get_result& result, step& out) {
  const std::optional<object>& found = result.found;
  acquire_in_doubt_ = false;  // whatever the record says resolves a write in doubt
  if (!found) {
    if (holding_) demote(loss_reason::superseded, out);
    observed_ = observation{observed_kind::absent, {}, now.steady, std::nullopt};
    previous_read_.reset();
    last_etag_.clear();
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    announce({}, {}, 0, out);
    return;
  }
  const std::string& etag = found->etag;
  last_etag_ = etag;
  record_decoding decoded =
      found->truncated ? decode_truncated_record(found->body.size()) : decode_record(found->body);
  if (!decoded.record) {
    // Held by an unknown writer: it may be taken over by expiry, with our lease (rule (c) needs
    // no timestamp from the record: the store's headers date it).
    last_error_code_ = decoded.error;
    last_error_ = decoded.message;
    log(log_level::error, "unreadable lock record etag=" + log_text::value(etag) +
                              " error=" + log_text::value(decoded.message));
    if (holding_) demote(loss_reason::superseded, out);
    const bool seen = observed_ && observed_->etag == etag;
    observed_ = observation{
        observed_kind::malformed, etag, seen ? observed_->first_seen : now.steady, std::nullopt,
        earliest(seen ? observed_->store_stamp : std::nullopt, store_stamp_of(now, result))};
    previous_read_ = read_summary{etag, {}, 0, false};
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    announce({}, {}, 0, out);
    return;
  }
  const lock_record& record = *decoded.record;
  max_term_seen_ = std::max(max_term_seen_, record.term);
  last_term_ = record.term;
  // Our nonce, not our server_id: a restarted process with the same id has never written this
  // record and must wait for it to expire like anyone else (anchors.md).
  if (!record.nonce.empty()) {
    if (const own_write* own = find_own(record.nonce)) {
      const own_write copy = *own;
      observe_own(now, etag, copy, out);
      return;
    }
  }
  observe_foreign(now, etag, record, store_stamp_of(now, result), out);
}

void election_core::observe_own(const instant& now, const std::string& etag, const own_write& own,
                                step& out) {
  previous_read_ = read_summary{etag, own.record.leader_id, own.record.term, false};
  if (own.record.released) {
    if (holding_) demote(loss_reason::superseded, out);
    observation sight{observed_kind::released, etag, now.steady, own.record};
    apply_coordination(sight);
    observed_ = std::move(sight);
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    announce({}, {}, own.record.term, out);
    return;
  }
  bool resumable = own.resumable;
  if (holding_) {
    if (own.sent >= holding_->renewed_at) {
      const bool landed = own.sent > holding_->renewed_at;
      holding_->renewed_at = own.sent;
      holding_->etag = etag;
      holding_->record = own.record;
      if (landed) {
        holding_->retry_at.reset();
        last_renewal_ = own.sent;
        last_renewal_wall_ = own.record.last_updated;
        leader_last_seen_ = now.wall;
      } else if (holding_->verify_pending) {
        // The renewal did not land; the record is still our previous one. Still ours until
        // S + D: try again after a pause.
        holding_->retry_at = now.steady + renew_retry_pause();
      }
      holding_->verify_pending = false;
      return;
    }
    demote(loss_reason::superseded, out);  // an older write of ours: the store went back
    resumable = false;
  }
  if (resumable && now.steady < own.sent + deadline_of(own.renew_deadline)) {
    become_holder(now, own, etag, out);
    return;
  }
  observed_ = observation{observed_kind::ours_dead, etag, now.steady, own.record};
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  announce(own.record.leader_id, own.record.leader_addr, own.record.term, out);
}

void election_core::observe_foreign(const instant& now, const std::string& etag,
                                    const lock_record& record,
                                    std::optional<steady_time> store_stamp, step& out) {
  if (holding_) demote(loss_reason::superseded, out);
  if (record.released) {
    observation sight{observed_kind::released, etag, now.steady, record};
    apply_coordination(sight);
    observed_ = std::move(sight);
    previous_read_ = read_summary{etag, {}, record.term, false};
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    announce({}, {}, record.term, out);
    return;
  }
  const bool seen = observed_ && observed_->etag == etag;
  if (!seen) leader_last_seen_ = now.wall;
  steady_time first_seen = seen ? observed_->first_seen : now.steady;
  if (peer_.seen && same_record(peer_.seen->record, record)) {
    // The leader told us of this very write earlier (peer mode): rule (b) counts from then.
    first_seen = std::min(first_seen, peer_.seen->first_at);
  }
  if (seen) store_stamp = earliest(store_stamp, observed_->store_stamp);
  observation sight{observed_kind::held, etag, first_seen, record, store_stamp};
  apply_coordination(sight);
  observed_ = std::move(sight);
  announce(record.leader_id, record.leader_addr, record.term, out);
  const read_summary summary{etag, record.leader_id, record.term, true};
  update_mode(now, summary);
  previous_read_ = summary;
}

void election_core::update_mode(const instant& now, const read_summary& read) {
  const bool same_etag = previous_read_ && previous_read_->etag == read.etag;
  const bool renewed = previous_read_ && previous_read_->held && !same_etag &&
                       previous_read_->leader_id == read.leader_id &&
                       previous_read_->term == read.term;
  const auto expiry = takeover_time();
  const bool expired = expiry && *expiry <= now.steady;
  // A leader renews every F, so a record that the store dates older than F says the leader
  // missed a renewal. Without this, a stable follower's first read after a crash sees the dead
  // leader's last, new-looking ETag and waits another I before acting. Only a hint for how
  // often to read: it never allows a takeover by itself.
  const auto written = written_by();
  const bool missed_renewal = written && now.steady - *written > config_.frequent_interval;
  // Reads F apart or more: the same ETag again means the leader did not renew in between. First-
  // hand reads come twice per renewal: only a record first seen over 1.25 F ago says so (the
  // reads land at 0.5 F steps, so it is the read at 1.5 F, whatever the renewals' jitter).
  const bool stalled = same_etag && (!reads_first_hand() || now.steady - observed_->first_seen >
                                                                config_.frequent_interval * 5 / 4);
  const poll_mode before = mode_;
  if (expired || stalled || missed_renewal) {
    // The leader did not renew since the last read (it renews every F), missed a renewal by its
    // own timestamp, or its record expired.
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
  } else if (same_etag) {
    // A first-hand read between two renewals: nothing new.
  } else if (!renewed) {
    mode_ = poll_mode::frequent;  // a new leader or term: watch it closely
    healthy_reads_ = 1;
  } else if (++healthy_reads_ >= 2) {
    mode_ = poll_mode::stable;
  }
  if (mode_ != before) {
    log(log_level::info, mode_ == poll_mode::stable ? "stable mode" : "back to frequent mode");
  }
}

}  // namespace s3lect::inline v1::detail
