// The election core writing the lock: the outcome of an acquisition, renewal or release, and
// holding and losing the lock.
#include "election_core.hpp"
#include "election_core_helpers.hpp"
#include "log_text.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>

namespace s3lect::inline v1::detail {

using namespace core_helpers;

using std::chrono::milliseconds;

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
    write_landed(now, what, own, result.etag, out);
  } else {
    if (!cancelled) {
      note_failure(ec, result.info);
      count_refusal(refused_writes_, ec);
    }
    write_failed(now, what, own, ec, cancelled, out);
  }
  return finish(now, std::move(out));
}

void election_core::write_landed(const instant& now, purpose what, const own_write& own,
                                 const std::string& etag, step& out) {
  consecutive_failures_ = 0;
  refused_writes_ = 0;
  max_term_seen_ = std::max(max_term_seen_, own.record.term);
  last_term_ = own.record.term;
  last_etag_ = etag;
  if (what == purpose::release) {
    finish_release(now, true, etag, own.record, out);
  } else if (holding_) {
    holding_->renewed_at = own.sent;
    holding_->renew_deadline = own.renew_deadline;
    holding_->etag = etag;
    holding_->record = own.record;
    holding_->retry_at.reset();
    last_renewal_ = own.sent;
    last_renewal_wall_ = own.record.last_updated;
    leader_last_seen_ = now.wall;
  } else if (own.resumable && now.steady < own.sent + deadline_of(own.renew_deadline)) {
    become_holder(now, own, etag, out);
  } else {
    // Landed after a demotion or after its own deadline: the record is ours, but that
    // leadership is over. Anyone, us included, may take it over at once with a new term.
    observed_ = observation{observed_kind::ours_dead, etag, now.steady, own.record};
    announce(own.record.leader_id, own.record.leader_addr, own.record.term, out);
    log(log_level::info,
        "late write landed after demotion term=" + std::to_string(own.record.term));
  }
}

void election_core::write_failed(const instant& now, purpose what, const own_write& own,
                                 const boost::system::error_code& ec, bool cancelled, step& out) {
  step_down_if_clock_refused(ec, out);
  if (what == purpose::release) {
    log(log_level::warning, "release failed error=" + log_text::value(last_error_));
    finish_release(now, false, {}, own.record, out);
    return;
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
    return;
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
  if (!cancelled)
    log(log_level::warning,
        "write outcome unknown, re-reading error=" + log_text::value(last_error_));
}

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
  out.notices.emplace_back(leadership_lost{holding_->term, reason});
}

void election_core::finish_release(const instant& now, bool released, const std::string& etag,
                                   const lock_record& written, step& out) {
  const std::uint64_t term = holding_ ? holding_->term : last_term_;
  for (own_write& write : own_writes_) write.resumable = false;
  holding_.reset();
  release_wanted_ = false;
  successor_wanted_.reset();
  release_finished finished;
  finished.released = released;
  finished.term = term;
  if (released) {
    finished.etag = etag;
    finished.successor = written.successor;
    finished.handover = written.handover;
  }
  out.notices.emplace_back(std::move(finished));
  if (released) {
    lock_record record;
    record.term = term;
    record.released = true;
    record.successor = written.successor;
    record.handover = written.handover;
    observation sight{observed_kind::released, etag, now.steady, record};
    apply_coordination(sight);
    observed_ = std::move(sight);
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

milliseconds election_core::renew_retry_pause() const {
  // The retry policy already waited between attempts; pause about as long as its longest delay
  // before the next round, so that fast failures (403, refused connections) do not spin.
  milliseconds longest{100};
  for (const milliseconds delay : config_.retry.delays) longest = std::max(longest, delay);
  return std::min(config_.frequent_interval, longest);
}

}  // namespace s3lect::inline v1::detail
