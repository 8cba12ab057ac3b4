#include "election_core.hpp"
#include "election_core_helpers.hpp"
#include "log_text.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>
#include <utility>

namespace s3lect::inline v1::detail {

using core_helpers::in_ms;

namespace {

using std::chrono::milliseconds;

// Writes remembered for recognising our own record on a re-read: far more than can be in doubt
// at once (one operation in flight, resolved by the next read).
constexpr std::size_t max_own_writes = 16;

}  // namespace

election_core::election_core(elector_config config, bool store_authenticated)
    : config_(std::move(config)), store_authenticated_(store_authenticated) {}

// ---------------------------------------------------------------------------------------------
// Events

step election_core::start(const instant& now) {
  if (started_ && !stopped_) return finish(now, {});
  started_ = true;
  stopped_ = stop_wanted_ = release_wanted_ = false;
  // Writes of an earlier run are history: finding one again means "ours, but not leading".
  for (own_write& write : own_writes_) write.resumable = false;
  acquire_not_before_.reset();
  successor_wanted_.reset();
  observed_.reset();
  previous_read_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  peer_.seen.reset();
  peer_.serial.reset();
  peer_.last_at.reset();
  peer_.deadline.reset();
  peer_.watch_unsupported = false;
  peer_.introduced = false;
  peer_.view_stale = false;
  reread_.reset();
  refused_reads_ = refused_writes_ = 0;  // an operator may have fixed what was refused
  log(log_level::info, "election started key=" + log_text::value(config_.lock_key) +
                           " id=" + log_text::value(config_.server_id));
  return finish(now, {});
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

step election_core::resign(const instant& now, milliseconds hold_off,
                           std::optional<std::string> successor) {
  step out;
  if (!started_ || stopped_ || stop_wanted_) return finish(now, std::move(out));
  enforce_deadline(now, out);
  acquire_not_before_ = now.steady + hold_off;
  release_wanted_ = true;
  // Naming nobody, or ourselves, leaves the choice to add_coordination(): the best candidate.
  if (successor && (successor->empty() || *successor == config_.server_id)) successor.reset();
  // The application following preemption::advise's advice: a handover by preemption.
  if (holding_ && successor && advised_ && *advised_ == std::pair{holding_->term, *successor}) {
    preemption_.handed_over(*successor, now.steady);
  }
  successor_wanted_ = std::move(successor);
  report_loss(loss_reason::resigned, out);
  log(log_level::info, "resigning hold_off=" + in_ms(hold_off) +
                           (successor_wanted_ ? " to=" + log_text::value(*successor_wanted_) : ""));
  return finish(now, std::move(out));
}

step election_core::update_config(const instant& now, elector_config config) {
  config_ = std::move(config);
  if (!started_ || stopped_) return {};
  return finish(now, {});
}

step election_core::on_candidates(const instant& now, std::vector<candidate> list) {
  candidates_ = std::move(list);
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
    out.notices.emplace_back(leadership_gained{holding_->term});
    log(log_level::info, "leadership gained term=" + std::to_string(holding_->term));
    preemption_.regained(now.steady, config_.settle_time(), acquiring_by_expiry_);
  }
  consider_preemption(now, out);
  const bool acquiring = acquire_in_doubt_ || (in_flight_ && in_flight_->what == purpose::acquire);
  if (release_wanted_ && !holding_ && !acquiring) {
    release_wanted_ = false;
    out.notices.emplace_back(release_finished{});
  }
  if (in_flight_) {
    if (in_flight_->what == purpose::peer && peer_.deadline && now.steady >= *peer_.deadline &&
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
    out.notices.emplace_back(core_stopped{});
    log(log_level::info, "stopped");
    return;
  }
  // After a peer check sent us back to the store, what we last read is old news (the leader
  // renewed many times meanwhile): read first, a takeover decided on it would be a wasted PUT.
  if (!peer_.view_stale && takeover_allowed(now)) return start_acquisition(now, out);
  if (peer_usable()) {
    if (now.steady >= store_read_due(now)) return start_read(out);
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
    if (const auto settled = preemption_wake(now)) consider(*settled);
    return wake;
  }
  if (in_flight_) {
    if (in_flight_->what == purpose::peer && peer_.deadline && !cancel_sent_) {
      consider(*peer_.deadline);
    }
    return wake;
  }
  consider(peer_usable() ? std::min(peer_due(now), store_read_due(now)) : read_due(now));
  // In stable mode the follower trusts the healthy leader until its next read: that is the
  // point of stable mode. Acting at the expiry moment is for frequent mode.
  if (mode_ == poll_mode::frequent && !acquire_in_doubt_ && !peer_.view_stale) {
    if (const auto t = competition_time()) {
      consider(acquire_not_before_ ? std::max(*t, *acquire_not_before_) : *t);
    }
  }
  return wake;
}

// ---------------------------------------------------------------------------------------------
// Starting operations

void election_core::start_read(step& out) {
  in_flight_ = in_flight{purpose::read, {}};
  storage_request request;
  request.type = storage_request::kind::read;
  out.operation = std::move(request);
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
  if (config_.peer.enabled) record.key_pin = config_.peer.key_pin;
  add_coordination(record, what == purpose::release);

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
  acquiring_by_expiry_ = grace;
  log(log_level::info,
      "acquiring reason=" + log_text::value(reason) + " term=" + std::to_string(term));
  start_write(now, purpose::acquire, std::move(condition), term, grace, out);
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

void election_core::note_failure(const boost::system::error_code& ec, const response_info& info) {
  ++consecutive_failures_;
  last_error_code_ = ec;
  const std::string words = core_helpers::store_words(info);
  last_error_ = words.empty() ? ec.message() : ec.message() + ": " + words;
}

bool election_core::refused_for_good() const noexcept {
  return refused_reads_ >= refusals_before_giving_up ||
         refused_writes_ >= refusals_before_giving_up;
}

void election_core::count_refusal(unsigned& streak, const boost::system::error_code& ec) noexcept {
  streak = is_refusal(ec) ? streak + 1 : 0;
}

bool is_refusal(const boost::system::error_code& ec) noexcept {
  if (ec.category() != error_category()) return false;
  switch (static_cast<errc>(ec.value())) {
    case errc::access_denied:
    case errc::signature_mismatch:
    case errc::invalid_access_key:
    case errc::bad_request:
    case errc::no_such_bucket:
      return true;
    default:
      return false;
  }
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

}  // namespace s3lect::inline v1::detail
