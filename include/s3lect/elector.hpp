// The elector: campaigns for one lock key on a storage, renews while leader, demotes itself
// before anyone else may take over, and exposes leadership as awaitable signals.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/config.hpp>
#include <s3lect/elector_counters.hpp>
#include <s3lect/leadership.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace s3lect::inline v1 {

class leadership_source;

/// A successor for elector::async_resign_to that is named even if the leader does not know it
/// as a candidate: `elector.async_resign_to(unchecked_successor("node-b"), token)`. A class
/// with a constructor rather than an aggregate, so that it may be built inside a co_await
/// expression on GCC 12 (docs/architecture.md#gcc-12-coroutine-rules).
class unchecked_successor {
 public:
  /// Names `id` as the successor.
  explicit unchecked_successor(std::string id) : id_(std::move(id)) {}
  const std::string& id() const noexcept { return id_; }  ///< The server_id to name.

 private:
  std::string id_;
};

/// Leader election on one lock key. Runs on the executor given at construction (wrapped in a
/// strand, so the io_context may run on several threads); starts no threads of its own.
/// status(), is_leader() and leader_id() may be called from any thread.
///
/// Every asynchronous operation follows Asio's rules: while pending it is outstanding work on
/// the executor associated with its handler (so that executor's io_context::run() does not
/// return meanwhile), and it completes there, never inline; a handler with no associated
/// executor completes on get_executor(). The hooks of elector_config run on get_executor()
/// too, through a strand of their own, never on the strand that renews.
class elector {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config` (throws boost::system::system_error with errc::invalid_config naming the
  /// field). `store` must outlive the elector; several electors may share one store.
  elector(executor_type executor, storage& store, elector_config config);
  /// Stops campaigning without releasing the lock (followers take over after the lease), and
  /// completes every pending wait with errc::stopped. Use async_stop() to hand over at once.
  ~elector();
  elector(const elector&) = delete;
  elector& operator=(const elector&) = delete;

  /// The executor given at construction.
  executor_type get_executor() const;

  /// Starts campaigning and completes when the election ends: `co_await elector.async_run()`
  /// runs it to its end, as Boost.Redis's connection::async_run does. Completes with
  /// `void(error_code)`:
  /// - success, once async_stop() (or a stop by another path) has stopped the elector;
  /// - a refusal of the store, once the elector has stopped itself because of it: three reads
  ///   in a row, or three writes in a row, answered with errc::signature_mismatch,
  ///   errc::invalid_access_key, errc::access_denied, errc::no_such_bucket or errc::bad_request
  ///   (a wrong region or an endpoint that is not S3). status().last_error then holds the
  ///   store's own words (its error code and message). No retry changes such an answer; an
  ///   operator must. Transient failures (timeouts, 5xx, throttling, a lost connection) are
  ///   retried as with start(), however long they last;
  /// - errc::stopped, when the elector is destroyed first.
  /// A refusal stops the elector only while an async_run waits: with start() alone the elector
  /// retries for ever, and status().last_error_code shows what the store answered. Any number of
  /// async_run may wait; they complete together. After it completed, the elector may be run
  /// again (the count of refusals starts afresh).
  /// Cancellation: any type; async_run completes with asio::error::operation_aborted and the
  /// elector goes on running (stop it with async_stop()).
  template <class CompletionToken = default_token>
  auto async_run(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_run{this}, token);
  }

  /// Starts campaigning, as async_run() does, without waiting for the end. Idempotent while
  /// running; after a stop the elector can start again.
  void start();

  /// Stops campaigning; a leader writes a released record first so a follower takes over at
  /// once. Completes with `void(error_code)` after the elector stopped (the release is best
  /// effort: its failure is logged, not returned). When it stops, pending
  /// async_wait_for_leadership and async_resign complete with errc::stopped, a leader's
  /// async_wait_for_loss with success (its lease ended), and async_wait_for_change with the
  /// stopped status (status().running false); the other waits stay pending (they end with their
  /// own event, or with errc::stopped when the elector is destroyed).
  /// Cancellation: terminal only (partial and total are ignored: the stop cannot be undone);
  /// async_stop completes with operation_aborted and the elector still stops, without waiting
  /// for the release.
  /// A leader's loss is reported before the release: async_wait_for_loss completions reach
  /// their executors before the released record is written (so does async_resign).
  template <class CompletionToken = default_token>
  auto async_stop(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_stop{this}, token);
  }

  /// Gives up leadership (writes a released record) and keeps campaigning after the acquire
  /// backoff. Completes with `void(error_code)`: errc::not_leader if not leader.
  /// Cancellation: terminal only (partial and total are ignored); operation_aborted, and the
  /// resignation may still happen.
  template <class CompletionToken = default_token>
  auto async_resign(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_resign{this, false}, token, std::optional<std::string>{});
  }

  /// Like async_resign, but the released record names `successor` (a server_id) to take over
  /// first; the other followers hold off for coordination.handover_window (2 F when `successor`
  /// holds no watch on this leader). A name orders who writes first, nothing more: if
  /// `successor` does not take over, another follower does after the window. An empty
  /// `successor`, or this elector's own id, names the best candidate, as async_resign does.
  /// `successor` must be one of this leader's verified candidates (status().candidates with
  /// verified set), so that a mistyped or departed name cannot leave the lock to nobody for the
  /// window. Only a peer-mode leader has candidates: in S3 mode, or to name any id, use
  /// unchecked_successor.
  /// Completes with `void(error_code)`: errc::not_leader if not leader, else
  /// errc::unknown_successor for an id that is no verified candidate (nothing is written).
  /// Cancellation: terminal; the resignation may still happen.
  template <class CompletionToken = default_token>
  auto async_resign_to(std::string successor, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_resign{this, true}, token, std::optional<std::string>{std::move(successor)});
  }

  /// async_resign_to without the check of the name: `successor.id()` is named whether or not
  /// this leader knows it as a candidate (in S3 mode a leader knows none; its followers read the
  /// released record and the one named takes over at its next read). Completes with
  /// `void(error_code)`: errc::not_leader if not leader. Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_resign_to(unchecked_successor successor, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_resign{this, false}, token, std::optional<std::string>{successor.id()});
  }

  /// Waits until this elector is leader (at once if it is). Completes with
  /// `void(error_code, leadership_lease)`; any number of waiters. Cancellation: any type;
  /// the wait completes with asio::error::operation_aborted and the elector is unaffected.
  template <class CompletionToken = default_token>
  auto async_wait_for_leadership(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, lease_signature>(
        initiate_wait_for_leadership{this}, token);
  }

  /// Waits until `lease` is lost (at once if it already is): demotion, resignation, stop.
  /// Completes with `void(error_code)`: success when the lease ended, errc::stopped if the
  /// elector was destroyed. Cancellation: any type; operation_aborted, elector unaffected.
  template <class CompletionToken = default_token>
  auto async_wait_for_loss(leadership_lease lease, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_wait_for_loss{this}, token, lease);
  }

  /// With coordination.preempt == preemption::advise: waits until the elector advises handing
  /// `lease` over to a verified candidate of strictly higher priority that has settled
  /// (docs/coordination.md#preemption), at once if it already has. Stop your work, then call
  /// async_resign_to() with the id. Completes with `void(error_code, std::string successor)`:
  /// errc::not_leader once `lease` is over without advice, errc::stopped if the elector was
  /// destroyed. Cancellation: any type; operation_aborted, elector unaffected.
  template <class CompletionToken = default_token>
  auto async_wait_for_handover_advice(leadership_lease lease, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, advice_signature>(
        initiate_wait_for_handover_advice{this}, token, lease);
  }

  /// Waits until an election cycle completes after `since` (wall clock); with a default
  /// `since`, until the first cycle. Completes with `void(error_code, leadership_status)`.
  /// Cancellation: any type; operation_aborted, elector unaffected.
  template <class CompletionToken = default_token>
  auto async_wait_for_next_election(std::chrono::system_clock::time_point since = {},
                                    CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, status_signature>(
        initiate_wait_for_next_election{this}, token, since);
  }

  /// Waits until status().version exceeds `seen_version` (at once if it already does), so a
  /// loop that passes the last version it saw observes every change. Completes with
  /// `void(error_code, leadership_status)`. Cancellation: any type; operation_aborted.
  template <class CompletionToken = default_token>
  auto async_wait_for_change(std::uint64_t seen_version, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, status_signature>(
        initiate_wait_for_change{this}, token, seen_version);
  }

  /// True while this elector holds leadership (and its acquire hook has succeeded).
  bool is_leader() const;
  /// The current leader's id as last seen; empty when none is known.
  std::string leader_id() const;
  /// A consistent snapshot of the elector's state.
  leadership_status status() const;
  /// The configuration in force.
  elector_config config() const;

  /// What this elector did so far; callable from any thread.
  elector_counters counters() const;

  /// For the health endpoint: is_leader, term, the record of the last successful write, the
  /// lease left. Its version also increases on every successful renewal (so a watch can follow
  /// renewals) and, after a stop or resignation, only once the released record is written (so
  /// a watching follower that hears of the change finds the lock released).
  leadership_snapshot snapshot() const;

  /// Whether the elector is stuck (not live) and whether it is ready, for liveness and
  /// readiness probes: include/s3lect/liveness.hpp says when. Callable from any thread; reads
  /// the state under a lock and the clock, never waits for the loop (which may be stuck).
  liveness_report liveness(liveness_limits limits = {}) const;

  /// Replaces the configuration while running; lock_key and server_id cannot change. Returns
  /// nullopt when applied, else why the new configuration was refused (the old one stays).
  std::optional<std::string> update_config(elector_config config);

  /// This elector as the leadership_source of a health endpoint (health.hpp): give it to a
  /// health_server, or to a health_handler embedded in your server, so that followers in peer
  /// mode can ask whether it leads. Valid as long as the elector. A health_server in
  /// zero-configuration TLS (or with publish_endpoint) publishes its endpoint through it once it
  /// listens: peer.key_pin when the pin is not empty, and server_address when empty
  /// (reachable_address of where it listens), are set through update_config(), so records
  /// written from then on carry them.
  leadership_source& health_source() noexcept;

 private:
  using lease_signature = void(boost::system::error_code, leadership_lease);
  using status_signature = void(boost::system::error_code, leadership_status);
  using advice_signature = void(boost::system::error_code, std::string);
  using stop_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  using lease_handler = boost::asio::any_completion_handler<lease_signature>;
  using status_handler = boost::asio::any_completion_handler<status_signature>;
  using advice_handler = boost::asio::any_completion_handler<advice_signature>;

  void run_impl(stop_handler handler);
  void stop_impl(stop_handler handler);
  void resign_impl(std::optional<std::string> successor, bool check_successor,
                   stop_handler handler);
  void wait_for_leadership_impl(lease_handler handler);
  void wait_for_loss_impl(leadership_lease lease, stop_handler handler);
  void wait_for_handover_advice_impl(leadership_lease lease, advice_handler handler);
  void wait_for_next_election_impl(std::chrono::system_clock::time_point since,
                                   status_handler handler);
  void wait_for_change_impl(std::uint64_t seen_version, status_handler handler);

  // Named initiation objects rather than lambdas: GCC 12 mishandles lambda temporaries in
  // co_await expressions (docs/architecture.md#gcc-12-coroutine-rules), and these end up inside the
  // caller's co_await.
  struct initiate_run {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->run_impl(stop_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_stop {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->stop_impl(stop_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_resign {
    elector* self;
    bool check_successor;  // async_resign_to(std::string): the name must be a verified candidate
    template <class Handler>
    void operator()(Handler&& handler, std::optional<std::string> successor) const {
      self->resign_impl(std::move(successor), check_successor,
                        stop_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_wait_for_leadership {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->wait_for_leadership_impl(lease_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_wait_for_loss {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler, leadership_lease lease) const {
      self->wait_for_loss_impl(lease, stop_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_wait_for_handover_advice {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler, leadership_lease lease) const {
      self->wait_for_handover_advice_impl(lease, advice_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_wait_for_next_election {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler, std::chrono::system_clock::time_point since) const {
      self->wait_for_next_election_impl(since, status_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_wait_for_change {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler, std::uint64_t seen_version) const {
      self->wait_for_change_impl(seen_version, status_handler(std::forward<Handler>(handler)));
    }
  };

  struct impl;
  std::shared_ptr<impl> impl_;
  std::unique_ptr<leadership_source> health_source_;
};

}  // namespace s3lect::inline v1
