// The publisher's side that other threads call: the waits of the public API and the reads of
// the status, counters and health snapshot.
#include "leadership_publisher.hpp"

#include <s3lect/error.hpp>

#include <algorithm>

namespace s3lect::inline v1::detail {

using boost::system::error_code;
using std::chrono::milliseconds;

void leadership_publisher::fail_all_waiters() {
  std::lock_guard lock(mutex_);
  leadership_waiters_.complete_all({errc::stopped, leadership_lease{}});
  loss_waiters_.complete_all({errc::stopped});
  election_waiters_.complete_all({errc::stopped, leadership_status{}});
  change_waiters_.complete_all({errc::stopped, leadership_status{}});
  stop_waiters_.complete_all({errc::stopped});
  run_waiters_.complete_all({errc::stopped});
  resign_waiters_.complete_all({errc::stopped});
  health_waiters_.complete_all({errc::stopped});
}

void leadership_publisher::add_stop_waiter(done_handler handler) {
  std::lock_guard lock(mutex_);
  stop_waiters_.add({}, std::move(handler));
}

void leadership_publisher::add_run_waiter(done_handler handler) {
  std::lock_guard lock(mutex_);
  run_waiters_.add({}, std::move(handler));
}

bool leadership_publisher::run_pending() const {
  return run_waiters_.size() > 0;
}

void leadership_publisher::complete_stop_waiters() {
  std::lock_guard lock(mutex_);
  stop_waiters_.complete_all({error_code{}});
}

void leadership_publisher::refuse_resign(done_handler handler, error_code refusal) {
  std::lock_guard lock(mutex_);
  waiter_list<std::monostate> once(executors_);
  once.add({}, std::move(handler));
  once.complete_all({published_lease_ ? refusal : error_code{errc::not_leader}});
}

bool leadership_publisher::add_resign_waiter(done_handler handler) {
  std::lock_guard lock(mutex_);
  if (!published_lease_) {
    waiter_list<std::monostate> once(executors_);
    once.add({}, std::move(handler));
    once.complete_all({errc::not_leader});
    return false;
  }
  resign_waiters_.add({}, std::move(handler));
  return true;
}

void leadership_publisher::wait_for_leadership(lease_handler handler) {
  std::lock_guard lock(mutex_);
  leadership_waiters_.add({}, std::move(handler));
  if (published_lease_ && leading_locked()) {
    const auto lease = *published_lease_;
    leadership_waiters_.complete_all({error_code{}, lease});
  }
}

void leadership_publisher::wait_for_loss(const leadership_lease& lease, done_handler handler) {
  std::lock_guard lock(mutex_);
  loss_waiters_.add(lease.period, std::move(handler));
  if (!published_lease_ || published_lease_->period != lease.period) {
    const std::uint64_t period = lease.period;
    loss_waiters_.complete_if([period](std::uint64_t waited) {
      return waited == period ? std::optional<std::tuple<error_code>>(error_code{}) : std::nullopt;
    });
  }
}

void leadership_publisher::wait_for_next_election(std::chrono::system_clock::time_point since,
                                                  status_handler handler) {
  std::lock_guard lock(mutex_);
  election_waiters_.add(since, std::move(handler));
  if (status_.last_election_time && *status_.last_election_time > since) {
    complete_election_waiters_locked();
  }
}

void leadership_publisher::wait_for_change(std::uint64_t seen_version, status_handler handler) {
  std::lock_guard lock(mutex_);
  change_waiters_.add(seen_version, std::move(handler));
  if (status_.version > seen_version) complete_change_waiters_locked();
}

void leadership_publisher::wait_for_health_change(std::uint64_t seen_version,
                                                  done_handler handler) {
  std::lock_guard lock(mutex_);
  health_waiters_.add(seen_version, std::move(handler));
  if (health_.version > seen_version) complete_health_waiters_locked();
}

bool leadership_publisher::is_leader() const {
  std::lock_guard lock(mutex_);
  return leading_locked();
}

std::string leadership_publisher::leader_id() const {
  std::lock_guard lock(mutex_);
  return status_.leader_id;
}

leadership_status leadership_publisher::status() const {
  std::lock_guard lock(mutex_);
  leadership_status status = status_;
  status.is_leader = leading_locked();
  return status;
}

elector_counters leadership_publisher::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

liveness_facts leadership_publisher::liveness() const {
  std::lock_guard lock(mutex_);
  liveness_facts facts;
  facts.running = status_.running;
  if (published_lease_) facts.leadership_deadline = leadership_deadline_;
  facts.loop_last_ran = loop_last_ran_;
  facts.cycle_completed = status_.last_election_time.has_value();
  facts.consecutive_failures = status_.consecutive_failures;
  return facts;
}

leadership_snapshot leadership_publisher::snapshot() const {
  std::lock_guard lock(mutex_);
  leadership_snapshot out = health_;
  if (!out.is_leader) return out;
  // As is_leader(): a paused process past its deadline does not claim leadership.
  const auto now = clock_.now();
  if (!leading_locked()) {
    out.is_leader = false;
    out.record_json.clear();
    return out;
  }
  out.lease_remaining = std::chrono::ceil<milliseconds>(*leadership_deadline_ - now);
  // Rounded down: a follower counts the lease from (answer received − age), which must not be
  // earlier than the write was sent.
  if (health_record_sent_) {
    out.write_age =
        std::max(milliseconds{0}, std::chrono::floor<milliseconds>(now - *health_record_sent_));
  }
  return out;
}

}  // namespace s3lect::inline v1::detail
