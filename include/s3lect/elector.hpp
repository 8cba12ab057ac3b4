// The elector: campaigns for one lock key on a storage, renews while leader, demotes itself
// before anyone else may take over, and exposes leadership as awaitable signals.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/health.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect {

/// One period of leadership. `term` is the fencing token: strictly greater than every term
/// before it; pass it to the resources you protect so they can reject a stale leader.
struct leadership_lease {
  std::uint64_t term = 0;
  std::uint64_t period = 0;  ///< Identifies this leadership period within this elector.
  std::chrono::steady_clock::time_point acquired_at{};
};

/// What a follower polls at: every frequent interval, or every infrequent one once stable.
enum class poll_mode { frequent, stable };

/// A snapshot of an elector's view of the election.
struct leadership_status {
  std::string server_id;
  std::string lock_key;
  bool running = false;
  bool is_leader = false;
  std::string leader_id;  ///< Empty when nobody holds the lock (absent or released).
  std::string leader_addr;
  std::uint64_t term = 0;  ///< Term of the last record seen or written.
  poll_mode mode = poll_mode::frequent;
  /// When this elector last saw the leader's record change, or renewed it itself.
  std::optional<std::chrono::system_clock::time_point> leader_last_seen;
  /// When the last election cycle (a read or write and its decision) completed.
  std::optional<std::chrono::system_clock::time_point> last_election_time;
  unsigned consecutive_failures = 0;
  std::string last_error;  ///< The last storage or record error, for diagnostics.
  /// This node's wall clock against the store's; unset before the first answer with a `Date`.
  std::optional<store_clock_offset> clock_offset;
  std::uint64_t version = 0;  ///< Increases on every change of leader, term or is_leader.
};

/// Attempts of one kind of request, by how they ended.
struct request_counts {
  std::uint64_t ok = 0;
  std::uint64_t not_found = 0;            ///< GET of a missing key.
  std::uint64_t precondition_failed = 0;  ///< PUT refused by its condition (412, or 404/409).
  std::uint64_t failed = 0;               ///< Any other error, timeouts included.
  std::uint64_t total() const noexcept { return ok + not_found + precondition_failed + failed; }
};

/// A latency distribution with fixed bucket bounds, as Prometheus histograms want it.
struct latency_histogram {
  /// Upper bounds of the buckets in milliseconds; a last, unbounded bucket follows.
  static constexpr std::array<std::int64_t, 12> bounds_ms{5,   10,   25,   50,   100,   250,
                                                          500, 1000, 2500, 5000, 10000, 30000};
  /// counts[i]: observations ≤ bounds_ms[i] and > bounds_ms[i - 1]; counts.back(): the rest.
  std::array<std::uint64_t, bounds_ms.size() + 1> counts{};
  std::uint64_t count = 0;
  std::chrono::microseconds sum{0};

  void observe(std::chrono::microseconds latency) noexcept;
};

/// What one elector did since it was constructed, for tests, benchmarks and metrics. Requests
/// count every attempt, retries included.
struct elector_counters {
  request_counts s3_get;  ///< GET attempts of the lock record.
  request_counts s3_put;  ///< Conditional PUT attempts (acquire, renew, release).
  /// Peer-mode health checks: ok = the leader answered, not_found = "not leader" (404).
  request_counts peer_check;
  std::uint64_t acquisitions = 0;  ///< Leaderships gained (reported).
  std::uint64_t renewals = 0;      ///< Successful renewals.
  std::uint64_t losses = 0;        ///< Leaderships lost, whatever the reason.
  std::uint64_t demotions = 0;     ///< Losses because no renewal succeeded by the deadline.
  /// Successful renewals, from sending the first attempt to its success.
  latency_histogram renewal_latency;

  std::uint64_t s3_requests() const noexcept { return s3_get.total() + s3_put.total(); }
};

/// Leader election on one lock key. Runs on the executor given at construction (wrapped in a
/// strand, so the io_context may run on several threads); starts no threads of its own.
/// status(), is_leader() and leader_id() may be called from any thread.
///
/// An elector is a leadership_source: give it to a health_server (or embed a health_handler)
/// so that followers in peer mode can ask it whether it leads.
class elector : public leadership_source {
 public:
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config` (throws boost::system::system_error with errc::invalid_config naming the
  /// field). `store` must outlive the elector; several electors may share one store.
  elector(executor_type executor, storage& store, elector_config config);
  /// Stops campaigning without releasing the lock (followers take over after the lease), and
  /// completes every pending wait with errc::stopped. Use async_stop() to hand over at once.
  ~elector() override;
  elector(const elector&) = delete;
  elector& operator=(const elector&) = delete;

  executor_type get_executor() const;

  /// Starts campaigning. Idempotent while running; after a stop the elector can start again.
  void start();

  /// Stops campaigning; a leader writes a released record first so a follower takes over at
  /// once. Completes with `void(error_code)` after the elector stopped (the release is best
  /// effort: its failure is logged, not returned). Pending waits complete with errc::stopped.
  /// Cancellation: terminal; the elector still stops, without waiting for the release.
  /// A leader's loss is reported before the release: async_wait_for_loss completions reach
  /// their executors before the released record is written (so does async_resign).
  template <class CompletionToken = default_token>
  auto async_stop(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_stop{this}, token);
  }

  /// Gives up leadership (writes a released record) and keeps campaigning after the acquire
  /// backoff. Completes with `void(error_code)`: errc::not_leader if not leader.
  /// Cancellation: terminal; the resignation may still happen.
  template <class CompletionToken = default_token>
  auto async_resign(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        initiate_resign{this}, token);
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
  leadership_snapshot snapshot() const override;

  /// Whether the elector is stuck (not live) and whether it is ready, for liveness and
  /// readiness probes: include/s3lect/liveness.hpp says when. Callable from any thread; reads
  /// the state under a lock and the clock, never waits for the loop (which may be stuck).
  liveness_report liveness(liveness_limits limits = {}) const;

  /// Replaces the configuration while running; lock_key and server_id cannot change. Returns
  /// nullopt when applied, else why the new configuration was refused (the old one stays).
  std::optional<std::string> update_config(elector_config config);

  /// The library's zero-configuration default, called by a health_server given no certificate
  /// (or with publish_endpoint) once it listens: sets peer.key_pin to `key_pin` when it is not
  /// empty and, when server_address is empty, server_address to reachable_address(bound),
  /// through update_config(). Records written from then on carry the pin and the address.
  std::optional<std::string> publish_peer_endpoint(
      std::string_view key_pin, const boost::asio::ip::tcp::endpoint& bound) override;

 private:
  using lease_signature = void(boost::system::error_code, leadership_lease);
  using status_signature = void(boost::system::error_code, leadership_status);
  using stop_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  using lease_handler = boost::asio::any_completion_handler<lease_signature>;
  using status_handler = boost::asio::any_completion_handler<status_signature>;

  void stop_impl(stop_handler handler);
  void resign_impl(stop_handler handler);
  void wait_for_leadership_impl(lease_handler handler);
  void wait_for_loss_impl(leadership_lease lease, stop_handler handler);
  void wait_for_next_election_impl(std::chrono::system_clock::time_point since,
                                   status_handler handler);
  void wait_for_change_impl(std::uint64_t seen_version, status_handler handler);
  void wait_change_impl(std::uint64_t seen_version,
                        boost::asio::any_completion_handler<change_signature> handler) override;

  // Named initiation objects rather than lambdas: GCC 12 mishandles lambda temporaries in
  // co_await expressions (docs/architecture.md#gcc-12-coroutine-rules), and these end up inside the
  // caller's co_await.
  struct initiate_stop {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->stop_impl(stop_handler(std::forward<Handler>(handler)));
    }
  };
  struct initiate_resign {
    elector* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->resign_impl(stop_handler(std::forward<Handler>(handler)));
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
};

}  // namespace s3lect
