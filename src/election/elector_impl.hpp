// The elector's parts and their wiring. Each part has a file of its own:
//   election_loop.cpp       the loop: feeds events to the sans-I/O core and performs its steps
//   storage_operations.cpp  one read or write of the lock, under the retry policy
//   peer_follower.cpp       a follower's check of the leader's health endpoint (peer mode)
//   hook_runner.cpp         the on_acquire and on_lose hooks
//   leadership_publisher.*  the status, counters, health snapshot and waiters other threads see
// All decisions live in the core (election_core.hpp) and its helpers (hold_offs.hpp,
// write_retry.hpp); the parts only perform them.
#pragma once

#include "s3lect/elector.hpp"
#include "s3lect/retry.hpp"

#include "boot_timer.hpp"
#include "candidate_registry.hpp"
#include "clock_timer.hpp"
#include "election_core.hpp"
#include "guarded_storage.hpp"
#include "handover_advice.hpp"
#include "hold_offs.hpp"
#include "leadership_publisher.hpp"
#include "loop_events.hpp"
#include "peer_client.hpp"
#include "store_clock.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1 {

namespace detail {

/// The loop's own state. Strand only.
struct loop_state {
  loop_state(const boost::asio::any_io_executor& strand, clock_source clock)
      : wake_timer(strand, clock) {}

  // On the core's clock, which counts a suspend, with a timerfd of its own so that it fires as
  // soon as the machine wakes (Asio's timers share a CLOCK_MONOTONIC one, which does not count
  // the suspend); on a unit test's manual clock, a manual_timer. Doubles as the loop's condition
  // variable: cancel() wakes it.
  clock_timer<boot_timer> wake_timer;
  std::optional<steady_time> core_wake_at;
  std::deque<loop_event> events;
  bool running = false;
  bool shutting_down = false;
  // The store refused this elector for good while an async_run waited: the loop is stopping it.
  bool giving_up = false;
  boost::asio::cancellation_signal operation_cancel;
};

/// Times a request's limit and the retry policy's pauses, on the elector's clock.
using short_timer = clock_timer<boost::asio::steady_timer>;

/// async_retry with its pauses on the elector's clock (short_timer).
template <retryable_operation Op, class Retryable = transient_errors>
boost::asio::awaitable<attempt_result_t<Op>> retry_on_elector_clock(retry_policy policy, Op op,
                                                                    Retryable retryable = {}) {
  return async_retry<Op, Retryable, short_timer>(std::move(policy), std::move(op),
                                                 std::move(retryable));
}

/// The on_acquire hook in flight, if any. Strand only.
struct hook_state {
  // A new signal for every acquire hook (see hook_finished in hook_runner.cpp).
  std::shared_ptr<boost::asio::cancellation_signal> cancel;
  std::uint64_t period = 0;  // Period whose on_acquire hook is running; 0: none.
  acquire_hook_backoff backoff;
  std::optional<leadership_lease> pending_lease;  // Gained, not yet published (hook running).
};

/// The candidates' side of the elector (candidate_verifier.cpp). Strand only, except where noted.
struct candidate_state {
  candidate_state(const boost::asio::any_io_executor& strand, clock_source clock)
      : verify_timer(strand, clock), refresh_timer(strand, clock) {}

  std::vector<candidate> pushed;            // The list last given to the core.
  std::atomic<bool> refresh_posted{false};  // Any thread: a refresh_candidates() is queued.
  clock_timer<boot_timer> verify_timer;     // Wakes the next registration read.
  clock_timer<boot_timer> refresh_timer;    // Wakes when the list may change unasked.
  bool registration_warned = false;         // A registration failure is logged once.
  // The priority of the last registration started; nullopt: none yet.
  std::optional<std::int32_t> registered_priority;
  bool upkeep_running = false;  // A run_registration is in flight.
  bool upkeep_again = false;    // Asked for while one was in flight: run once more after it.
  std::string written_body;     // What this elector last wrote (or found) there; empty: nothing.
  std::optional<steady_time> upkeep_due;  // The next upkeep, at a lock read from then on.
  steady_time listing_check_after{};      // No upkeep check_own_listing() asks for before this.
};

/// A peer client for `config`, or none outside peer mode; its checks claim `server_id` and
/// coordination.priority with `claim_token`. Throws system_error (errc::invalid_config) for
/// unreadable or invalid certificates.
std::shared_ptr<peer_client> make_peer_client(const boost::asio::any_io_executor& executor,
                                              const elector_config& config,
                                              const std::string& claim_token);
/// True when `a` and `b` give the peer client the same settings (its claim included).
bool same_peer_settings(const elector_config& a, const elector_config& b);

}  // namespace detail

struct elector::impl : std::enable_shared_from_this<impl> {
  using hook_function = std::function<boost::asio::awaitable<void>(std::uint64_t)>;

  impl(executor_type executor, storage& store, elector_config config);

  boost::asio::strand<executor_type> strand;
  // Where the hooks run: the application's executor, serialised on a strand of its own, so a
  // hook that blocks or computes delays no renewal (config.hpp's promise); the loop's
  // strand stays the elector's alone.
  boost::asio::strand<executor_type> hook_strand;
  // The real clocks, or the manual clock a unit test installed on the executor's context.
  detail::clock_source clock;

  // ---- Thread-safe.
  // This elector's secret for its claims (docs/peer-mode.md#candidates): fresh for each
  // elector, never in elector_config (which is printed) and never logged.
  const std::string claim_token;
  const bool store_authenticated;   // The storage's answers_authenticated().
  detail::guarded_storage store;    // Cleared by ~elector.
  detail::store_clock store_clock;  // From the Date of the store's answers.
  detail::leadership_publisher publisher;
  detail::handover_advice advice;  // preemption::advise's advice, per term
  detail::candidate_registry candidates;
  mutable std::mutex config_mutex;
  elector_config config_snapshot;  // What config() reports; update_config() replaces it.

  // ---- Strand only.
  std::shared_ptr<detail::peer_client> peer;  // Peer mode only.
  detail::election_core core;
  detail::loop_state loop;
  detail::hook_state hooks;
  detail::candidate_state candidate_work;

  /// Logs with the core's copy of the configuration (config_snapshot belongs to its mutex).
  void log(log_level level, const std::string& line) const;
  /// "Now" for the core: the boot clock, and the store's time as best known (the local wall
  /// clock corrected by the measured offset), which stamps lastUpdated so readers see true time.
  detail::instant now() const;

  // election_loop.cpp
  static boost::asio::awaitable<void> run_loop(std::shared_ptr<impl> self);
  /// Queues an event for the loop and wakes it.
  void push(detail::loop_event event);
  void handle(detail::loop_event event);
  /// Performs one step of the core, in the order the core prescribes.
  void apply(detail::step step);
  void publish(const detail::core_notice& notice);
  /// After a step: an async_run is pending and the store refuses this elector for good, so the
  /// elector stops and the run completes with the refusal (elector::async_run).
  void give_up_if_refused();

  // storage_operations.cpp
  void start_operation(detail::storage_request request);
  static boost::asio::awaitable<void> run_read(std::shared_ptr<impl> self);
  static boost::asio::awaitable<void> run_write(std::shared_ptr<impl> self, std::string body,
                                                put_condition condition, bool releasing);
  static boost::asio::awaitable<std::tuple<boost::system::error_code, get_result>> read_attempt(
      std::shared_ptr<impl> self, std::string key, std::chrono::milliseconds timeout);
  static boost::asio::awaitable<std::tuple<boost::system::error_code, put_result>> write_attempt(
      std::shared_ptr<impl> self, std::string key, std::string body, put_condition condition,
      std::chrono::milliseconds timeout);
  void note_store_date(detail::boot_clock::time_point sent,
                       const std::optional<std::chrono::system_clock::time_point>& date);
  void note_refused_clock(const boost::system::error_code& ec) const;

  // peer_follower.cpp
  static boost::asio::awaitable<void> run_peer_check(std::shared_ptr<impl> self,
                                                     detail::peer_check_request request);
  static boost::asio::awaitable<std::tuple<boost::system::error_code, detail::peer_answer>>
  check_attempt(std::shared_ptr<impl> self, std::shared_ptr<detail::peer_client> client,
                std::string address, std::string key_pin, std::optional<detail::peer_watch> watch);

  // candidate_verifier.cpp
  /// Any thread: a claim heard by our health endpoint.
  void note_candidate(const candidate_claim& claim);
  /// Starts afresh with no candidates at a change of our leadership.
  void reset_candidates(bool leading);
  /// True when async_resign_to may name `id`: empty or our own id (the best candidate is
  /// named), or one of the verified candidates. Thread-safe.
  bool knows_successor(const std::string& id) const;
  /// Gives the core the verified candidates when they changed, and reads a registration when
  /// the budget allows.
  void refresh_candidates();
  void schedule_verification();
  void schedule_refresh();
  static boost::asio::awaitable<void> run_verification(std::shared_ptr<impl> self,
                                                       detail::candidate_verification checked);

  // registration_upkeep.cpp
  /// Peer mode: makes sure this elector's registration object says what `config` does (at
  /// start, when update_config() changes the priority, at each change of leader, at the first
  /// lock read 10 I after the last upkeep, and when check_own_listing() suspects it), rewriting
  /// it when it does not. One upkeep at a
  /// time; a request meanwhile runs after it.
  void register_candidate(const elector_config& config);
  /// A read of the lock succeeded: the upkeep due 10 I after the last one runs now.
  void upkeep_after_lock_read();
  /// A leader's answer carried `record`: an upkeep at once when the record shows that our id is
  /// claimed by someone else.
  void check_own_listing(const lock_record& record);
  static boost::asio::awaitable<void> run_registration(std::shared_ptr<impl> self,
                                                       elector_config config);

  // hook_runner.cpp
  void on_gained(std::uint64_t term);
  void on_lost(std::uint64_t term, detail::loss_reason reason);
  void on_hook_done(const detail::hook_done& done);
  static boost::asio::awaitable<void> run_acquire_hook(std::shared_ptr<impl> self,
                                                       hook_function hook, leadership_lease lease);
  static boost::asio::awaitable<void> run_lose_hook(std::shared_ptr<impl> self, hook_function hook,
                                                    std::uint64_t term);
};

}  // namespace s3lect::inline v1
