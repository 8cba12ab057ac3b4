#include "election_core.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <utility>

namespace s3lect::detail {
namespace {

using std::chrono::milliseconds;

// Writes remembered for recognising our own record on a re-read: far more than can be in doubt
// at once (one operation in flight, resolved by the next read).
constexpr std::size_t max_own_writes = 16;

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

std::string in_ms(steady_time::duration d) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) + "ms";
}

const char* to_string(loss_reason reason) {
  switch (reason) {
    case loss_reason::renew_deadline:
      return "renew_deadline";
    case loss_reason::clock_refused:
      return "clock_refused";
    case loss_reason::superseded:
      return "superseded";
    case loss_reason::resigned:
      return "resigned";
    case loss_reason::stopped:
      return "stopped";
  }
  return "unknown";
}

/// The same write: every field a writer sets (the nonce alone would do for s3lect's records;
/// the rest covers writers without one).
bool same_record(const lock_record& a, const lock_record& b) {
  return a.leader_id == b.leader_id && a.leader_addr == b.leader_addr &&
         a.last_updated == b.last_updated && a.term == b.term && a.lease == b.lease &&
         a.released == b.released && a.nonce == b.nonce;
}

}  // namespace

election_core::election_core(elector_config config) : config_(std::move(config)) {}

// ---------------------------------------------------------------------------------------------
// Events

step election_core::start(const instant& now) {
  if (started_ && !stopped_) return finish(now, {});
  started_ = true;
  stopped_ = stop_wanted_ = release_wanted_ = false;
  // Writes of an earlier run are history: finding one again means "ours, but not leading".
  for (own_write& write : own_writes_) write.resumable = false;
  acquire_not_before_.reset();
  observed_.reset();
  previous_read_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  peer_seen_.reset();
  peer_serial_.reset();
  last_peer_at_.reset();
  peer_deadline_.reset();
  peer_watch_unsupported_ = false;
  peer_introduced_ = false;
  peer_view_stale_ = false;
  log(log_level::info, "election started key=" + config_.lock_key + " id=" + config_.server_id);
  return finish(now, {});
}

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
    note_failure(ec, result.info.message);
    log(log_level::warning, "read failed error=" + last_error_);
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
    return finish(now, std::move(out));
  }
  consecutive_failures_ = 0;
  peer_view_stale_ = false;
  observe(now, result, out);
  return finish(now, std::move(out));
}

step election_core::on_write_done(const instant& now, const boost::system::error_code& ec,
                                  const put_result& result) {
  step out;
  if (!in_flight_ || in_flight_->what == purpose::read || in_flight_->what == purpose::peer) {
    return finish(now, std::move(out));
  }
  const purpose what = in_flight_->what;
  const std::string nonce = in_flight_->nonce;
  const bool cancelled = cancel_sent_ && ec == boost::asio::error::operation_aborted;
  in_flight_.reset();
  cancel_sent_ = false;
  last_election_time_ = now.wall;
  // First, so that a renewal landing at or after S + D finds its leadership already over.
  enforce_deadline(now, out);
  const own_write* sent = find_own(nonce);
  if (!sent) return finish(now, std::move(out));  // unreachable: the last write is remembered
  const own_write own = *sent;

  if (!ec) {
    consecutive_failures_ = 0;
    max_term_seen_ = std::max(max_term_seen_, own.record.term);
    last_term_ = own.record.term;
    last_etag_ = result.etag;
    if (what == purpose::release) {
      finish_release(now, true, result.etag, out);
    } else if (holding_) {
      holding_->renewed_at = own.sent;
      holding_->renew_deadline = own.renew_deadline;
      holding_->etag = result.etag;
      holding_->record = own.record;
      holding_->retry_at.reset();
      last_renewal_ = own.sent;
      last_renewal_wall_ = own.record.last_updated;
      leader_last_seen_ = now.wall;
    } else if (own.resumable && now.steady < own.sent + deadline_of(own.renew_deadline)) {
      become_holder(now, own, result.etag, out);
    } else {
      // Landed after a demotion or after its own deadline: the record is ours, but that
      // leadership is over. Anyone, us included, may take it over at once with a new term.
      observed_ = observation{observed_kind::ours_dead, result.etag, now.steady, own.record};
      announce(own.record.leader_id, own.record.leader_addr, own.record.term, out);
      log(log_level::info,
          "late write landed after demotion term=" + std::to_string(own.record.term));
    }
    return finish(now, std::move(out));
  }

  if (!cancelled) note_failure(ec, result.info.message);
  step_down_if_clock_refused(ec, out);
  if (what == purpose::release) {
    log(log_level::warning, "release failed error=" + last_error_);
    finish_release(now, false, {}, out);
    return finish(now, std::move(out));
  }
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  if (ec == errc::precondition_failed) {
    // Someone else wrote first: never ours. A renewal's 412 demotes at once.
    if (holding_) demote(loss_reason::superseded, out);
    acquire_in_doubt_ = false;
    observed_.reset();
    log(log_level::info,
        std::string(what == purpose::renew ? "renewal" : "acquisition") + " lost the race");
    return finish(now, std::move(out));
  }
  // The write may or may not have landed: a re-read compares the record's nonce with ours.
  // Never assume a win. The observation stays, so expiry still counts from its first sight.
  if (holding_) {
    holding_->verify_pending = true;
  } else if (what == purpose::acquire) {
    // If it did not land, the record is likely still takeable: pause before the next try so
    // that fast failures do not spin.
    acquire_in_doubt_ = own.resumable;
    acquire_not_before_ = now.steady + renew_retry_pause();
  }
  if (!cancelled) log(log_level::warning, "write outcome unknown, re-reading error=" + last_error_);
  return finish(now, std::move(out));
}

step election_core::on_peer_done(const instant& now, const boost::system::error_code& ec,
                                 const peer_answer& answer) {
  step out;
  if (!in_flight_ || in_flight_->what != purpose::peer) return finish(now, std::move(out));
  in_flight_.reset();
  cancel_sent_ = false;
  peer_deadline_.reset();
  last_peer_at_ = now.steady;
  const bool was_watch = peer_watching_;
  peer_watching_ = false;
  if (stop_wanted_ || !observed_ || observed_->kind != observed_kind::held) {
    return finish(now, std::move(out));
  }
  const lock_record& known = *observed_->record;
  if (ec) {
    // Includes our own cancellation of a watch that heard of no renewal for D.
    last_error_code_ = ec;
    last_error_ =
        "peer check: " + ec.message() + (answer.message.empty() ? "" : ": ") + answer.message;
    fall_back_to_store("peer_check_failed error=\"" + last_error_ + "\"");
    return finish(now, std::move(out));
  }
  if (!answer.leader) {
    fall_back_to_store("leader_says_not_leader");
    return finish(now, std::move(out));
  }
  if (answer.leader_id != known.leader_id || (answer.term != 0 && answer.term != known.term)) {
    fall_back_to_store("peer_is_another_leader peer=" + answer.leader_id +
                       " term=" + std::to_string(answer.term));
    return finish(now, std::move(out));
  }
  if (answer.watch == peer_watch_outcome::stopping) {
    fall_back_to_store("leader_server_stopping");
    return finish(now, std::move(out));
  }
  // Healthy: the leader answered with its last successful write, sent at least `write_age`
  // before the answer reached us (the leader measured the age before answering, and the
  // answer took time to arrive): rule (b) may count from there.
  const steady_time sent_by = now.steady - answer.write_age.value_or(std::chrono::milliseconds{0});
  if (!peer_seen_ || !same_record(peer_seen_->record, answer.record)) {
    peer_seen_ = peer_evidence{answer.record, sent_by};
  } else {
    peer_seen_->first_at = std::min(peer_seen_->first_at, sent_by);
  }
  peer_serial_ = answer.serial;
  peer_introduced_ = true;
  // A leader that did not hold the watch (a Go leader, a full or watch-less server) is
  // polled every I instead of asked again at once.
  if (was_watch) {
    peer_watch_unsupported_ =
        answer.watch == peer_watch_outcome::none || answer.watch == peer_watch_outcome::refused;
  }
  return finish(now, std::move(out));
}

step election_core::on_timer(const instant& now) {
  return finish(now, {});
}

step election_core::stop(const instant& now) {
  step out;
  if (!started_ || stopped_) return out;
  enforce_deadline(now, out);
  if (stop_wanted_) return finish(now, std::move(out));
  stop_wanted_ = true;
  release_wanted_ = true;
  report_loss(loss_reason::stopped, out);
  const bool cancellable =
      in_flight_ && (in_flight_->what == purpose::read || in_flight_->what == purpose::peer);
  if (cancellable && !holding_ && !acquire_in_doubt_ && !cancel_sent_) {
    out.cancel_operation = true;
    cancel_sent_ = true;
  }
  log(log_level::info, "stopping");
  return finish(now, std::move(out));
}

step election_core::resign(const instant& now, milliseconds hold_off) {
  step out;
  if (!started_ || stopped_ || stop_wanted_) return finish(now, std::move(out));
  enforce_deadline(now, out);
  acquire_not_before_ = now.steady + hold_off;
  release_wanted_ = true;
  report_loss(loss_reason::resigned, out);
  log(log_level::info, "resigning hold_off=" + in_ms(hold_off));
  return finish(now, std::move(out));
}

step election_core::update_config(const instant& now, elector_config config) {
  config_ = std::move(config);
  if (!started_ || stopped_) return {};
  return finish(now, {});
}

// ---------------------------------------------------------------------------------------------
// Deciding what to do next

step election_core::finish(const instant& now, step out) {
  advance(now, out);
  out.wake_at = next_wake(now);
  return out;
}

void election_core::advance(const instant& now, step& out) {
  if (!started_ || stopped_) return;
  enforce_deadline(now, out);
  if (holding_ && !holding_->reported && !release_wanted_ && now.steady >= holding_->report_at) {
    holding_->reported = true;
    out.notices.push_back(leadership_gained{holding_->term});
    log(log_level::info, "leadership gained term=" + std::to_string(holding_->term));
  }
  const bool acquiring = acquire_in_doubt_ || (in_flight_ && in_flight_->what == purpose::acquire);
  if (release_wanted_ && !holding_ && !acquiring) {
    release_wanted_ = false;
    out.notices.push_back(release_finished{false});
  }
  if (in_flight_) {
    if (in_flight_->what == purpose::peer && peer_deadline_ && now.steady >= *peer_deadline_ &&
        !cancel_sent_) {
      // The leader renews every F and answers a serial watch on each renewal: silence for D
      // means it is stuck or gone (it demotes itself by then anyway). Ask the store.
      out.cancel_operation = true;
      cancel_sent_ = true;
    }
    return;
  }

  if (holding_) {
    if (holding_->verify_pending) return start_read(out);
    const put_condition renew_condition = put_condition::matches(holding_->etag);
    if (release_wanted_) {
      return start_write(now, purpose::release, renew_condition, holding_->term, false, out);
    }
    if (now.steady >= renew_due()) {
      return start_write(now, purpose::renew, renew_condition, holding_->term, false, out);
    }
    return;
  }
  if (stop_wanted_) {
    if (acquire_in_doubt_) return start_read(out);  // one read: release it if it is ours
    stopped_ = true;
    out.notices.push_back(core_stopped{});
    log(log_level::info, "stopped");
    return;
  }
  // After a peer check sent us back to the store, what we last read is old news (the leader
  // renewed many times meanwhile): read first, a takeover decided on it would be a wasted PUT.
  if (!peer_view_stale_ && takeover_allowed(now)) return start_acquisition(now, out);
  if (peer_usable()) {
    if (now.steady >= peer_due(now)) start_peer_check(now, out);
    return;
  }
  if (now.steady >= read_due(now)) start_read(out);
}

std::optional<steady_time> election_core::next_wake(const instant& now) const {
  if (!started_ || stopped_) return std::nullopt;
  std::optional<steady_time> wake;
  const auto consider = [&wake](steady_time t) {
    if (!wake || t < *wake) wake = t;
  };
  if (holding_) {
    if (!in_flight_ || in_flight_->what != purpose::release) {
      consider(holding_->renewed_at + deadline_of(holding_->renew_deadline));
    }
    if (!holding_->reported && !release_wanted_) consider(holding_->report_at);
    if (!in_flight_ && !holding_->verify_pending && !release_wanted_) consider(renew_due());
    return wake;
  }
  if (in_flight_) {
    if (in_flight_->what == purpose::peer && peer_deadline_ && !cancel_sent_) {
      consider(*peer_deadline_);
    }
    return wake;
  }
  consider(peer_usable() ? peer_due(now) : read_due(now));
  // In stable mode the follower trusts the healthy leader until its next read: that is the
  // point of stable mode. Acting at the expiry moment is for frequent mode.
  if (mode_ == poll_mode::frequent && !acquire_in_doubt_ && !peer_view_stale_) {
    if (const auto t = takeover_time()) {
      consider(acquire_not_before_ ? std::max(*t, *acquire_not_before_) : *t);
    }
  }
  return wake;
}

void election_core::enforce_deadline(const instant& now, step& out) {
  if (!holding_ || (in_flight_ && in_flight_->what == purpose::release)) return;
  if (now.steady >= holding_->renewed_at + deadline_of(holding_->renew_deadline)) {
    demote(loss_reason::renew_deadline, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the record

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
  record_decoding decoded = decode_record(found->body);
  if (!decoded.record) {
    // Held by an unknown writer: it may be taken over by expiry, with our lease (rule (c) needs
    // no timestamp from the record: the store's headers date it).
    last_error_code_ = decoded.error;
    last_error_ = decoded.message;
    log(log_level::error, "unreadable lock record etag=" + etag + " error=" + decoded.message);
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
    observed_ = observation{observed_kind::released, etag, now.steady, own.record};
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
    observed_ = observation{observed_kind::released, etag, now.steady, record};
    previous_read_ = read_summary{etag, {}, record.term, false};
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
    announce({}, {}, record.term, out);
    return;
  }
  const bool seen = observed_ && observed_->etag == etag;
  if (!seen) leader_last_seen_ = now.wall;
  steady_time first_seen = seen ? observed_->first_seen : now.steady;
  if (peer_seen_ && same_record(peer_seen_->record, record)) {
    // The leader told us of this very write earlier (peer mode): rule (b) counts from then.
    first_seen = std::min(first_seen, peer_seen_->first_at);
  }
  if (seen) store_stamp = earliest(store_stamp, observed_->store_stamp);
  observed_ = observation{observed_kind::held, etag, first_seen, record, store_stamp};
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
  const poll_mode before = mode_;
  if (expired || same_etag || missed_renewal) {
    // The leader did not renew since the last read (it renews every F), missed a renewal by its
    // own timestamp, or its record expired.
    mode_ = poll_mode::frequent;
    healthy_reads_ = 0;
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

// ---------------------------------------------------------------------------------------------
// Holding and losing the lock

void election_core::become_holder(const instant& now, const own_write& own, const std::string& etag,
                                  step& out) {
  holding_state held;
  held.term = own.record.term;
  held.etag = etag;
  held.renewed_at = own.sent;
  held.renew_deadline = own.renew_deadline;
  held.record = own.record;
  // The grace runs from the moment the acquisition is known to have landed.
  held.report_at = own.grace ? now.steady + config_.acquire_grace : now.steady;
  holding_ = std::move(held);
  acquire_in_doubt_ = false;
  observed_.reset();
  previous_read_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  max_term_seen_ = std::max(max_term_seen_, own.record.term);
  last_term_ = own.record.term;
  last_etag_ = etag;
  last_renewal_ = own.sent;
  last_renewal_wall_ = own.record.last_updated;
  leader_last_seen_ = now.wall;
  announce(config_.server_id, config_.server_address, own.record.term, out);
  log(log_level::info, "lock acquired term=" + std::to_string(own.record.term) +
                           (own.grace ? " grace=" + in_ms(config_.acquire_grace) : ""));
}

void election_core::demote(loss_reason reason, step& out) {
  if (!holding_) return;
  report_loss(reason, out);
  const bool forced = reason == loss_reason::renew_deadline || reason == loss_reason::clock_refused;
  log(forced ? log_level::warning : log_level::info,
      "lock given up reason=" + std::string(to_string(reason)) +
          " term=" + std::to_string(holding_->term));
  // After a demotion the next acquisition is a new term, even of a record we wrote.
  for (own_write& write : own_writes_) write.resumable = false;
  holding_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  if (in_flight_ && !cancel_sent_) {
    out.cancel_operation = true;
    cancel_sent_ = true;
  }
}

void election_core::step_down_if_clock_refused(const boost::system::error_code& ec, step& out) {
  // No request signed with this clock will succeed (S3 allows 15 minutes): waiting for S + D
  // would only keep leader work running on a lease that cannot be renewed.
  if (ec == errc::clock_skewed) demote(loss_reason::clock_refused, out);
}

void election_core::report_loss(loss_reason reason, step& out) {
  if (!holding_ || !holding_->reported) return;
  holding_->reported = false;
  out.notices.push_back(leadership_lost{holding_->term, reason});
}

void election_core::finish_release(const instant& now, bool released, const std::string& etag,
                                   step& out) {
  const std::uint64_t term = holding_ ? holding_->term : last_term_;
  for (own_write& write : own_writes_) write.resumable = false;
  holding_.reset();
  release_wanted_ = false;
  out.notices.push_back(release_finished{released});
  if (released) {
    lock_record record;
    record.term = term;
    record.released = true;
    observed_ = observation{observed_kind::released, etag, now.steady, record};
    announce({}, {}, term, out);
  } else {
    observed_.reset();
  }
  previous_read_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  last_read_at_ = now.steady;
  read_now_ = false;
  log(log_level::info, released ? "released" : "release not written");
}

// ---------------------------------------------------------------------------------------------
// Starting operations

void election_core::start_read(step& out) {
  in_flight_ = in_flight{purpose::read, {}};
  storage_request request;
  request.type = storage_request::kind::read;
  out.operation = std::move(request);
}

bool election_core::peer_usable() const {
  // Only a stable follower that knows a healthy leader's address; everything else reads S3.
  return config_.peer.enabled && mode_ == poll_mode::stable && !read_now_ && observed_ &&
         observed_->kind == observed_kind::held && observed_->record &&
         !observed_->record->leader_addr.empty();
}

steady_time election_core::peer_due(const instant& now) const {
  // A watch is asked for again at once: the leader holds it until something happens. The
  // plain check that introduces a watched leader (it tells the serial) goes at once too.
  if (config_.peer.watch && !peer_watch_unsupported_) return now.steady;
  steady_time last = last_read_at_.value_or(now.steady);
  if (last_peer_at_) last = std::max(last, *last_peer_at_);
  return last + config_.infrequent_interval;
}

void election_core::start_peer_check(const instant& now, step& out) {
  const lock_record& leader = *observed_->record;
  in_flight_ = in_flight{purpose::peer, {}};
  storage_request request;
  request.type = storage_request::kind::peer_check;
  request.peer.address = leader.leader_addr;
  request.peer.term = leader.term;
  // With watches on: first a plain check, which answers at once with the leader's write serial,
  // then watches. With a serial the leader answers on each renewal, so silence for D means
  // trouble; without one (a leader that does not count writes) the watch only ends on a change
  // of leadership or after I.
  if (config_.peer.watch && !peer_watch_unsupported_ && peer_introduced_) {
    request.peer.watch = config_.infrequent_interval;
    peer_watching_ = true;
    if (peer_serial_) {
      request.peer.serial = peer_serial_;
      peer_deadline_ = now.steady + config_.renew_deadline;
    }
  }
  out.operation = std::move(request);
}

void election_core::fall_back_to_store(const std::string& why) {
  log(log_level::info, "peer check says read the store: back to frequent mode reason=" + why);
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  peer_view_stale_ = true;
  peer_serial_.reset();
  peer_watch_unsupported_ = false;
  peer_introduced_ = false;
}

void election_core::start_write(const instant& now, purpose what, put_condition condition,
                                std::uint64_t term, bool grace, step& out) {
  lock_record record;
  record.leader_id = config_.server_id;
  record.leader_addr = config_.server_address;
  record.last_updated = now.wall;
  record.term = term;
  record.lease = config_.lease;
  record.released = what == purpose::release;
  record.nonce = make_nonce();

  storage_request request;
  request.type = storage_request::kind::write;
  request.body = encode_record(record);
  request.condition = std::move(condition);
  in_flight_ = in_flight{what, record.nonce};
  own_writes_.push_back(own_write{std::move(record), now.steady, grace, what != purpose::release,
                                  config_.renew_deadline});
  if (own_writes_.size() > max_own_writes) own_writes_.pop_front();
  out.operation = std::move(request);
}

void election_core::start_acquisition(const instant& now, step& out) {
  // A new holder, a new term: one above every term seen, also when re-taking our own record.
  const std::uint64_t term = max_term_seen_ + 1;
  put_condition condition = put_condition::absent();
  bool grace = false;
  std::string reason = "absent";
  switch (observed_->kind) {
    case observed_kind::absent:
      break;
    case observed_kind::released:
      condition = put_condition::matches(observed_->etag);
      reason = "released";
      break;
    case observed_kind::ours_dead:
      condition = put_condition::matches(observed_->etag);
      reason = "own_record_after_demotion";
      break;
    case observed_kind::held:
    case observed_kind::malformed:
      condition = put_condition::matches(observed_->etag);
      grace = true;
      reason = "expired";
      break;
  }
  log(log_level::info, "acquiring reason=" + reason + " term=" + std::to_string(term));
  start_write(now, purpose::acquire, std::move(condition), term, grace, out);
}

// ---------------------------------------------------------------------------------------------
// Time rules

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
  const auto when = takeover_time();
  return when && *when <= now.steady;
}

steady_time election_core::read_due(const instant& now) const {
  if (read_now_ || !last_read_at_) return now.steady;
  const milliseconds interval =
      mode_ == poll_mode::stable ? config_.infrequent_interval : config_.frequent_interval;
  return on_clock_probe(*last_read_at_ + interval, interval);
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

milliseconds election_core::renew_retry_pause() const {
  // The retry policy already waited between attempts; pause about as long as its longest delay
  // before the next round, so that fast failures (403, refused connections) do not spin.
  milliseconds longest{100};
  for (const milliseconds delay : config_.retry.delays) longest = std::max(longest, delay);
  return std::min(config_.frequent_interval, longest);
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping

election_core::own_write* election_core::find_own(const std::string& nonce) {
  for (own_write& write : own_writes_) {
    if (write.record.nonce == nonce) return &write;
  }
  return nullptr;
}

void election_core::announce(std::string id, std::string addr, std::uint64_t term, step& out) {
  leader_changed change{std::move(id), std::move(addr), term};
  if (announced_ && *announced_ == change) return;
  announced_ = change;
  out.notices.push_back(std::move(change));
}

void election_core::note_failure(const boost::system::error_code& ec, const std::string& detail) {
  ++consecutive_failures_;
  last_error_code_ = ec;
  last_error_ = detail.empty() ? ec.message() : ec.message() + ": " + detail;
}

void election_core::log(log_level level, const std::string& line) const {
  config_.log.log(level, line);
}

// ---------------------------------------------------------------------------------------------
// Read-only state

core_role election_core::role() const noexcept {
  if (!started_ || stopped_) return core_role::stopped;
  if (stop_wanted_) return core_role::stopping;
  if (holding_) return holding_->reported ? core_role::leader : core_role::holding;
  if (acquire_in_doubt_ || (in_flight_ && in_flight_->what == purpose::acquire)) {
    return core_role::candidate;
  }
  return core_role::follower;
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

const lock_record* election_core::held_record() const noexcept {
  return holding_ ? &holding_->record : nullptr;
}

std::optional<steady_time> election_core::held_record_sent() const noexcept {
  if (!holding_) return std::nullopt;
  return holding_->renewed_at;
}

core_status election_core::status() const {
  core_status status;
  status.role = role();
  if (announced_) {
    status.leader_id = announced_->leader_id;
    status.leader_addr = announced_->leader_addr;
  }
  status.term = last_term_;
  status.etag = last_etag_;
  status.mode = mode_;
  status.last_renewal = last_renewal_;
  status.last_renewal_wall = last_renewal_wall_;
  status.leader_last_seen = leader_last_seen_;
  status.last_election_time = last_election_time_;
  status.consecutive_failures = consecutive_failures_;
  status.last_error_code = last_error_code_;
  status.last_error = last_error_;
  return status;
}

}  // namespace s3lect::detail
