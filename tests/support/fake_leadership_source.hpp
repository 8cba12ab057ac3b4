// A leadership_source whose state the test sets directly: stands in for the elector when
// testing the health endpoint. Thread-safe, like the real one.
#pragma once

#include <s3lect/health.hpp>

#include "waiter_list.hpp"

#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace s3lect::test {

class fake_leadership_source final : public leadership_source {
 public:
  explicit fake_leadership_source(const boost::asio::any_io_executor& executor)
      : waiters_({executor, executor}) {}

  /// Becomes leader with `term`, serving `record_json` as its last successful write.
  void set_leader(std::uint64_t term, std::string record_json,
                  std::chrono::milliseconds lease_remaining = std::chrono::seconds{10},
                  std::string leader_id = "node-a") {
    leadership_snapshot next;
    next.is_leader = true;
    next.term = term;
    next.record_json = std::move(record_json);
    next.lease_remaining = lease_remaining;
    next.leader_id = std::move(leader_id);
    publish(std::move(next));
  }

  /// Becomes a follower that knows `leader_id` as leader with `term`.
  void set_follower(std::string leader_id, std::uint64_t term) {
    leadership_snapshot next;
    next.term = term;
    next.leader_id = std::move(leader_id);
    publish(std::move(next));
  }

  /// Changes the record without a change of leadership (a renewal): no version bump.
  void renew(std::string record_json) {
    const std::lock_guard lock(mutex_);
    current_.record_json = std::move(record_json);
  }

  leadership_snapshot snapshot() const override {
    const std::lock_guard lock(mutex_);
    return current_;
  }

  /// Number of pending async_wait_change operations.
  std::size_t waiters() const { return waiters_.size(); }

  void note_candidate(const candidate_claim& claim) override {
    const std::lock_guard lock(mutex_);
    claims_.push_back(claim);
  }

  /// Every claim the handler reported, in order.
  std::vector<candidate_claim> claims() const {
    const std::lock_guard lock(mutex_);
    return claims_;
  }

 protected:
  void wait_change_impl(std::uint64_t seen_version,
                        boost::asio::any_completion_handler<change_signature> handler) override {
    waiters_.add(seen_version, std::move(handler));
    complete_satisfied();
  }

 private:
  void publish(leadership_snapshot next) {
    {
      const std::lock_guard lock(mutex_);
      next.version = current_.version + 1;
      current_ = std::move(next);
    }
    complete_satisfied();
  }

  void complete_satisfied() {
    const std::uint64_t version = snapshot().version;
    waiters_.complete_if([version](std::uint64_t seen) {
      return seen < version ? std::optional(std::tuple<boost::system::error_code>{}) : std::nullopt;
    });
  }

  mutable std::mutex mutex_;
  leadership_snapshot current_;
  std::vector<candidate_claim> claims_;
  detail::waiter_list<std::uint64_t> waiters_;
};

}  // namespace s3lect::test
