// What the elector tells the rest of the process: the leadership status and the health snapshot
// other threads read, the counters, and every waiter on a change of them. The loop reports the
// core's notices here; the public API reads and waits here. Thread-safe: one mutex guards it
// all, so a waiter's condition and the state it is checked against never disagree.
#pragma once

#include <s3lect/elector.hpp>

#include "election_core.hpp"
#include "liveness.hpp"
#include "manual_clock.hpp"
#include "renewal_detector.hpp"
#include "waiter_list.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <variant>

namespace s3lect::inline v1::detail {

class leadership_publisher {
 public:
  using done_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  using lease_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, leadership_lease)>;
  using status_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, leadership_status)>;
  using status_result = std::optional<std::tuple<boost::system::error_code, leadership_status>>;

  /// Waiters complete through `executors` (waiter_list.hpp); deadlines are read on `clock`.
  leadership_publisher(const completion_executors& executors, clock_source clock,
                       std::string server_id, std::string lock_key);

  // ---- From the loop, on the strand.

  /// The period number of the next leadership.
  std::uint64_t next_period();
  /// The loop started.
  void started();
  /// Leadership is reported: `lease` under the core's current deadline and held record.
  void publish_lease(const leadership_lease& lease, const election_core& core);
  /// Reported leadership ended (or a gain that was never published): returns the lease that
  /// was published, if any, and completes the waiters for its loss.
  std::optional<leadership_lease> lose(loss_reason reason);
  /// The holder named by the record changed.
  void leader_changed(const detail::leader_changed& changed);
  /// The release asked for by stop() or resign() is over.
  void release_finished(const detail::release_finished& finished);
  /// The core stopped: async_run completes with the error give_up() noted, else success.
  void stopped();
  /// The store refuses this elector for good (election_core::refused_for_good): the stop the
  /// loop starts now completes async_run with `refusal`.
  void give_up(boost::system::error_code refusal);
  /// After every step: copies the core's status, counts renewals and wakes who waits for them.
  void refresh(const election_core& core);
  /// A release is under way: the health endpoint's change waits for the released record.
  bool release_pending() const;

  void count_get(const boost::system::error_code& ec, bool found);
  void count_put(const boost::system::error_code& ec);
  void count_peer(const boost::system::error_code& ec, const peer_answer& answer);

  // ---- From any thread.

  /// Completes every waiter with errc::stopped (the elector is being destroyed).
  void fail_all_waiters();
  /// Waits for the loop to stop: `handler` completes at the next stopped() or
  /// complete_stop_waiters().
  void add_stop_waiter(done_handler handler);
  /// async_run: `handler` completes at the next stopped(), or with errc::stopped from
  /// fail_all_waiters().
  void add_run_waiter(done_handler handler);
  /// True while an async_run waits: only then does a refusal stop the elector.
  bool run_pending() const;
  /// The loop was not running: completes the stop waiters at once.
  void complete_stop_waiters();
  /// Waits for the release of the published leadership and returns true; with none published,
  /// completes `handler` with errc::not_leader and returns false.
  bool add_resign_waiter(done_handler handler);
  /// Completes `handler` at once, without the resignation it asked for: errc::not_leader when
  /// not leading (as add_resign_waiter would), else `refusal`.
  void refuse_resign(done_handler handler, boost::system::error_code refusal);

  void wait_for_leadership(lease_handler handler);
  void wait_for_loss(const leadership_lease& lease, done_handler handler);
  void wait_for_next_election(std::chrono::system_clock::time_point since, status_handler handler);
  void wait_for_change(std::uint64_t seen_version, status_handler handler);
  void wait_for_health_change(std::uint64_t seen_version, done_handler handler);

  bool is_leader() const;
  std::string leader_id() const;
  /// The status, with is_leader as is_leader() says (clock_offset left to the caller).
  leadership_status status() const;
  elector_counters counters() const;
  leadership_snapshot snapshot() const;
  /// What elector::liveness() judges by.
  liveness_facts liveness() const;

 private:
  void bump_version_locked();
  void bump_health_locked();
  void note_renewal_locked(const election_core& core, const core_status& core_status);
  void complete_change_waiters_locked();
  void complete_health_waiters_locked();
  void complete_election_waiters_locked();
  /// is_leader() as other threads see it: a paused process whose deadline passed is not
  /// leader even before its loop runs again to demote it.
  bool leading_locked() const;

  completion_executors executors_;
  const clock_source clock_;
  mutable std::mutex mutex_;
  leadership_status status_;
  std::optional<leadership_lease> published_lease_;
  std::optional<steady_time> leadership_deadline_;
  std::uint64_t next_period_ = 0;
  elector_counters counters_;
  // What the health endpoint reports (leadership_source). Its version moves on its own rules
  // (see elector::snapshot()), so it has its own waiters.
  leadership_snapshot health_;
  /// When the write of health_.record_json was sent (its age goes into the peer answer).
  std::optional<steady_time> health_record_sent_;
  bool release_pending_ = false;  // Lost by stop/resign: the health change waits for the release.
  renewal_detector renewals_;
  /// When the loop last ran (started, or performed a step): what a liveness probe watches.
  std::optional<steady_time> loop_last_ran_;

  waiter_list<std::monostate, leadership_lease> leadership_waiters_;
  waiter_list<std::uint64_t> loss_waiters_;  // Key: the lease's period.
  waiter_list<std::chrono::system_clock::time_point, leadership_status> election_waiters_;
  waiter_list<std::uint64_t, leadership_status> change_waiters_;
  waiter_list<std::monostate> stop_waiters_;
  waiter_list<std::monostate> run_waiters_;
  boost::system::error_code run_error_;  // give_up()'s refusal, for the run waiters
  waiter_list<std::monostate> resign_waiters_;
  waiter_list<std::uint64_t> health_waiters_;
};

}  // namespace s3lect::inline v1::detail
