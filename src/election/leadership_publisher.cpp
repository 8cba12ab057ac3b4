#include "leadership_publisher.hpp"

#include <s3lect/error.hpp>
#include <s3lect/record.hpp>

#include <algorithm>
#include <tuple>
#include <utility>

namespace s3lect::inline v1::detail {

using boost::system::error_code;
using std::chrono::milliseconds;

namespace {

using done_result = std::optional<std::tuple<error_code>>;

}  // namespace

leadership_publisher::leadership_publisher(const completion_executors& executors,
                                           clock_source clock, std::string server_id,
                                           std::string lock_key)
    : executors_(executors),
      clock_(clock),
      leadership_waiters_(executors),
      loss_waiters_(executors),
      election_waiters_(executors),
      change_waiters_(executors),
      // async_stop and async_resign are terminal (elector.hpp): the stop or resignation goes on
      // after a cancellation, which partial and total cancellation would forbid.
      stop_waiters_(executors, boost::asio::cancellation_type::terminal),
      run_waiters_(executors),
      resign_waiters_(executors, boost::asio::cancellation_type::terminal),
      health_waiters_(executors) {
  status_.server_id = std::move(server_id);
  status_.lock_key = std::move(lock_key);
}

std::uint64_t leadership_publisher::next_period() {
  std::lock_guard lock(mutex_);
  return ++next_period_;
}

void leadership_publisher::started() {
  std::lock_guard lock(mutex_);
  status_.running = true;
  loop_last_ran_ = clock_.now();
  bump_version_locked();
}

void leadership_publisher::publish_lease(const leadership_lease& lease, const election_core& core) {
  std::lock_guard lock(mutex_);
  published_lease_ = lease;
  status_.is_leader = true;
  leadership_deadline_ = core.leadership_deadline();
  bump_version_locked();
  ++counters_.acquisitions;
  health_.is_leader = true;
  health_.term = lease.term;
  health_.released_etag.clear();
  if (const lock_record* held = core.held_record()) health_.record_json = encode_record(*held);
  health_record_sent_ = core.held_record_sent();
  ++health_.serial;
  bump_health_locked();
  leadership_waiters_.complete_all({error_code{}, lease});
}

std::optional<leadership_lease> leadership_publisher::lose(loss_reason reason) {
  std::lock_guard lock(mutex_);
  std::optional<leadership_lease> lost = std::exchange(published_lease_, std::nullopt);
  leadership_deadline_.reset();
  status_.is_leader = false;
  bump_version_locked();
  ++counters_.losses;
  if (reason == loss_reason::renew_deadline || reason == loss_reason::clock_refused) {
    ++counters_.demotions;
  }
  health_.is_leader = false;
  health_.record_json.clear();
  health_.lease_remaining = milliseconds{0};
  health_record_sent_.reset();
  // A watching follower told of a stop or resignation reads the lock at once: tell it only
  // when the released record is there, so it finds the lock free.
  release_pending_ = reason == loss_reason::stopped || reason == loss_reason::resigned ||
                     reason == loss_reason::preempted;
  if (!release_pending_) bump_health_locked();
  if (lost) {
    const std::uint64_t period = lost->period;
    loss_waiters_.complete_if([period](std::uint64_t waited) {
      return waited <= period ? done_result(error_code{}) : std::nullopt;
    });
  }
  return lost;
}

void leadership_publisher::leader_changed(const detail::leader_changed& changed) {
  std::lock_guard lock(mutex_);
  status_.leader_id = changed.leader_id;
  status_.leader_addr = changed.leader_addr;
  status_.term = changed.term;
  bump_version_locked();
  health_.leader_id = changed.leader_id;
  if (!health_.is_leader) health_.term = changed.term;
  // Someone leads again: our released record is no longer there to take over.
  if (!changed.leader_id.empty()) health_.released_etag.clear();
  if (!release_pending_) bump_health_locked();
}

void leadership_publisher::release_finished(const detail::release_finished& finished) {
  std::lock_guard lock(mutex_);
  resign_waiters_.complete_all({error_code{}});
  if (finished.released) {
    health_.released_etag = finished.etag;
    health_.released_term = finished.term;
    health_.released_successor = finished.successor;
    health_.released_handover = finished.handover;
  }
  release_pending_ = false;
  bump_health_locked();
}

void leadership_publisher::stopped() {
  std::lock_guard lock(mutex_);
  status_.running = false;
  bump_version_locked();
  release_pending_ = false;
  bump_health_locked();
  stop_waiters_.complete_all({error_code{}});
  run_waiters_.complete_all({std::exchange(run_error_, error_code{})});
  leadership_waiters_.complete_all({errc::stopped, leadership_lease{}});
  // A resignation that reached the core after the stop's own release was ignored by it.
  resign_waiters_.complete_all({errc::stopped});
}

void leadership_publisher::give_up(error_code refusal) {
  std::lock_guard lock(mutex_);
  run_error_ = refusal;
}

void leadership_publisher::refresh(const election_core& core) {
  const auto core_status = core.status();
  std::lock_guard lock(mutex_);
  loop_last_ran_ = clock_.now();
  note_renewal_locked(core, core_status);
  status_.mode = core_status.mode;
  status_.leader_last_seen = core_status.leader_last_seen;
  status_.consecutive_failures = core_status.consecutive_failures;
  status_.last_error_code = core_status.last_error_code;
  status_.last_error = core_status.last_error;
  if (published_lease_) leadership_deadline_ = core.leadership_deadline();
  if (core_status.last_election_time != status_.last_election_time) {
    status_.last_election_time = core_status.last_election_time;
    complete_election_waiters_locked();
  }
}

void leadership_publisher::note_renewal_locked(const election_core& core,
                                               const core_status& core_status) {
  const std::uint64_t period = published_lease_ ? published_lease_->period : 0;
  if (!renewals_.renewed(core_status.last_renewal, core.is_leader(), period)) return;
  ++counters_.renewals;
  counters_.renewal_latency.observe(std::chrono::duration_cast<std::chrono::microseconds>(
      clock_.now() - *core_status.last_renewal));
  if (const lock_record* held = core.held_record()) health_.record_json = encode_record(*held);
  health_record_sent_ = core.held_record_sent();
  ++health_.serial;
  bump_health_locked();
}

bool leadership_publisher::release_pending() const {
  std::lock_guard lock(mutex_);
  return release_pending_;
}

void leadership_publisher::count_get(const error_code& ec, bool found) {
  std::lock_guard lock(mutex_);
  if (ec) {
    ++counters_.s3_get.failed;
  } else if (found) {
    ++counters_.s3_get.ok;
  } else {
    ++counters_.s3_get.not_found;
  }
}

void leadership_publisher::count_put(const error_code& ec) {
  std::lock_guard lock(mutex_);
  if (!ec) {
    ++counters_.s3_put.ok;
  } else if (ec == errc::precondition_failed || ec == errc::conflict) {
    ++counters_.s3_put.precondition_failed;
  } else {
    ++counters_.s3_put.failed;
  }
}

void leadership_publisher::count_peer(const error_code& ec, const peer_answer& answer) {
  std::lock_guard lock(mutex_);
  if (ec) {
    ++counters_.peer_check.failed;
  } else if (answer.leader) {
    ++counters_.peer_check.ok;
  } else {
    ++counters_.peer_check.not_found;
  }
}

void leadership_publisher::bump_version_locked() {
  ++status_.version;
  complete_change_waiters_locked();
}

void leadership_publisher::bump_health_locked() {
  ++health_.version;
  complete_health_waiters_locked();
}

void leadership_publisher::complete_change_waiters_locked() {
  const auto status = status_;
  change_waiters_.complete_if([&status](std::uint64_t seen) {
    return seen < status.version ? status_result({error_code{}, status}) : std::nullopt;
  });
}

void leadership_publisher::complete_health_waiters_locked() {
  const std::uint64_t version = health_.version;
  health_waiters_.complete_if([version](std::uint64_t seen) {
    return seen < version ? done_result(error_code{}) : std::nullopt;
  });
}

void leadership_publisher::complete_election_waiters_locked() {
  const auto status = status_;
  election_waiters_.complete_if([&status](std::chrono::system_clock::time_point since) {
    return status.last_election_time && *status.last_election_time > since
               ? status_result({error_code{}, status})
               : std::nullopt;
  });
}

bool leadership_publisher::leading_locked() const {
  return published_lease_ && leadership_deadline_ && clock_.now() < *leadership_deadline_;
}

}  // namespace s3lect::inline v1::detail
