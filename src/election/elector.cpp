// The elector's coroutine layer: performs the steps of the sans-I/O election core on a strand
// (one storage operation under the retry policy, one timer), publishes leadership to waiters
// and hooks, and keeps a snapshot for thread-safe reads. All decisions live in the core.
#include "s3lect/elector.hpp"

#include "boot_timer.hpp"
#include "election_core.hpp"
#include "peer_client.hpp"
#include "store_clock.hpp"
#include "waiter_list.hpp"

#include <s3lect/error.hpp>
#include <s3lect/record.hpp>
#include <s3lect/retry.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <exception>
#include <mutex>
#include <variant>

namespace s3lect {

namespace asio = boost::asio;
using boost::system::error_code;
using detail::instant;
using detail::steady_time;
using std::chrono::milliseconds;

namespace {

/// Storage errors after which a conditional PUT certainly did not happen, so sending it again
/// is safe. Everything else ambiguous (timeouts, lost connections, 5xx) is resolved by the core
/// with a re-read, never by a blind retry that could answer 412 to our own earlier write.
bool write_retryable(const error_code& ec) {
  return ec == errc::resolve_failed || ec == errc::connect_failed ||
         ec == errc::tls_handshake_failed || ec == errc::throttled;
}

// Events the loop reacts to, queued on the strand.
struct read_done {
  error_code ec;
  get_result result;
};
struct write_done {
  error_code ec;
  put_result result;
};
struct peer_done {
  error_code ec;
  detail::peer_answer answer;
};
struct stop_request {};
struct resign_request {
  milliseconds hold_off;
};
struct config_request {
  elector_config config;
};
struct hook_done {
  std::uint64_t period;
  bool succeeded;
  std::string error;
};
struct shutdown_request {};
using loop_event = std::variant<read_done, write_done, peer_done, stop_request, resign_request,
                                config_request, hook_done, shutdown_request>;

/// The peer client's settings from the elector's.
detail::peer_client_config peer_settings(const elector_config& config) {
  detail::peer_client_config out;
  out.ca_file = config.peer_ca_file;
  out.ca_pem = config.peer_ca_pem;
  out.client_cert_file = config.peer_client_cert_file;
  out.client_cert_pem = config.peer_client_cert_pem;
  out.client_key_file = config.peer_client_key_file;
  out.client_key_pem = config.peer_client_key_pem;
  out.health_path = config.peer_health_path;
  out.timeout = config.peer_timeout;
  out.log = config.log;
  return out;
}

bool same_peer_settings(const elector_config& a, const elector_config& b) {
  return a.peer_mode == b.peer_mode && a.peer_ca_file == b.peer_ca_file &&
         a.peer_ca_pem == b.peer_ca_pem && a.peer_client_cert_file == b.peer_client_cert_file &&
         a.peer_client_cert_pem == b.peer_client_cert_pem &&
         a.peer_client_key_file == b.peer_client_key_file &&
         a.peer_client_key_pem == b.peer_client_key_pem &&
         a.peer_health_path == b.peer_health_path && a.peer_timeout == b.peer_timeout;
}

/// A peer client for `config`, or none outside peer mode. Throws system_error
/// (errc::invalid_config) for unreadable or invalid certificates.
std::shared_ptr<detail::peer_client> make_peer_client(const asio::any_io_executor& executor,
                                                      const elector_config& config) {
  if (!config.peer_mode) return nullptr;
  return std::make_shared<detail::peer_client>(executor, peer_settings(config));
}

}  // namespace

struct elector::impl : std::enable_shared_from_this<impl> {
  impl(executor_type executor, storage& store_ref, elector_config config)
      : strand(asio::make_strand(executor)),
        store(&store_ref),
        peer(make_peer_client(strand, config)),
        core(config),  // A copy: config_snapshot below takes the original.
        wake_timer(strand),
        config_snapshot(std::move(config)),
        leadership_waiters(strand),
        loss_waiters(strand),
        election_waiters(strand),
        change_waiters(strand),
        stop_waiters(strand),
        resign_waiters(strand),
        health_waiters(strand) {
    snapshot.server_id = config_snapshot.server_id;
    snapshot.lock_key = config_snapshot.lock_key;
  }

  asio::strand<executor_type> strand;

  // The storage, cleared by ~elector. The caller may destroy the storage as soon as the elector
  // is gone, while the loop and its operations still run until the shutdown reaches the strand:
  // every call into the storage holds this mutex, so ~elector returns only when no call is under
  // way, and none starts after it. Recursive: a storage completing inline resumes our coroutine
  // inside the call, which could start the next call.
  std::recursive_mutex store_mutex;
  storage* store;

  // ---- Strand only.
  std::shared_ptr<detail::peer_client> peer;  // Peer mode only.
  detail::election_core core;
  // On the core's clock, which counts a suspend, with a timerfd of its own so that it fires as
  // soon as the machine wakes (Asio's timers share a CLOCK_MONOTONIC one, which does not count
  // the suspend). Doubles as the loop's condition variable: cancel() wakes it.
  detail::boot_timer wake_timer;
  std::optional<steady_time> core_wake_at;
  std::deque<loop_event> events;
  bool loop_running = false;
  bool shutting_down = false;
  asio::cancellation_signal operation_cancel;
  // A new signal for every acquire hook (see hook_finished).
  std::shared_ptr<asio::cancellation_signal> hook_cancel;
  std::uint64_t hook_period = 0;  // Period whose on_acquire hook is running; 0: none.
  unsigned hook_failures = 0;     // Consecutive acquire-hook failures, for the backoff.
  std::optional<leadership_lease> pending_lease;  // Gained, not yet published (hook running).

  // ---- Guarded by mutex: what other threads read, and the waiters' conditions.
  mutable std::mutex mutex;
  leadership_status snapshot;
  elector_config config_snapshot;
  std::optional<leadership_lease> published_lease;
  std::optional<steady_time> leadership_deadline;
  /// When the write of health.record_json was sent (its age goes into the peer answer).
  std::optional<steady_time> health_record_sent;
  std::uint64_t next_period = 0;
  detail::waiter_list<std::monostate, leadership_lease> leadership_waiters;
  detail::waiter_list<std::uint64_t> loss_waiters;  // Key: the lease's period.
  detail::waiter_list<std::chrono::system_clock::time_point, leadership_status> election_waiters;
  detail::waiter_list<std::uint64_t, leadership_status> change_waiters;
  detail::waiter_list<std::monostate> stop_waiters;
  detail::waiter_list<std::monostate> resign_waiters;
  elector_counters counters;
  // What the health endpoint reports (leadership_source). Its version moves on its own rules
  // (see elector::snapshot()), so it has its own waiters.
  leadership_snapshot health;
  detail::waiter_list<std::uint64_t> health_waiters;
  bool release_pending = false;     // Lost by stop/resign: the health change waits for the release.
  detail::store_clock store_clock;  // From the Date of the store's answers; thread-safe.
  std::optional<steady_time> last_renewal_seen;  // Strand: detects successful writes.
  std::uint64_t renewal_period_seen = 0;         // The leadership period of the write seen last.

  /// Strand only. The core's copy of the configuration, not config_snapshot: that one belongs
  /// to the mutex, and update_config() replaces it from any thread.
  void log(log_level level, const std::string& line) const {
    core.config().log.log(level, line + " id=" + core.config().server_id);
  }

  /// "Now" for the core: the boot clock, and the store's time as best known (the local wall
  /// clock corrected by the measured offset), which stamps lastUpdated so readers see true time.
  instant now() const {
    const auto boot = detail::boot_clock::now();
    return {boot, store_clock.store_now(boot)};
  }

  /// The Date of an answer to a request sent at `sent`: a sample of the store's clock. Strand
  /// only.
  void note_store_date(detail::boot_clock::time_point sent,
                       const std::optional<std::chrono::system_clock::time_point>& date) {
    if (!date) return;
    auto noted = store_clock.note_date(sent, *date, core.config().max_clock_skew);
    core.set_clock_probe(noted.probe);
    for (const auto& [level, line] : noted.lines) log(level, line);
  }

  /// Queues an event for the loop and wakes it. Strand only.
  void push(loop_event event) {
    events.push_back(std::move(event));
    wake_timer.cancel();
  }

  // ------------------------------------------------------------------------------------------
  // The loop.

  static asio::awaitable<void> run_loop(std::shared_ptr<impl> self) {
    self->apply(self->core.start(self->now()));
    while (!self->shutting_down) {
      if (!self->events.empty()) {
        loop_event event = std::move(self->events.front());
        self->events.pop_front();
        self->handle(std::move(event));
        continue;
      }
      if (!self->loop_running) break;
      if (self->core_wake_at && detail::boot_clock::now() >= *self->core_wake_at) {
        self->core_wake_at.reset();
        self->apply(self->core.on_timer(self->now()));
        continue;
      }
      self->wake_timer.expires_at(self->core_wake_at.value_or(steady_time::max()));
      co_await self->wake_timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    self->loop_running = false;
  }

  void handle(loop_event event) {
    if (auto* read = std::get_if<read_done>(&event)) {
      apply(core.on_read_done(now(), read->ec, read->result));
    } else if (auto* write = std::get_if<write_done>(&event)) {
      apply(core.on_write_done(now(), write->ec, write->result));
    } else if (auto* checked = std::get_if<peer_done>(&event)) {
      apply(core.on_peer_done(now(), checked->ec, checked->answer));
    } else if (std::holds_alternative<stop_request>(event)) {
      apply(core.stop(now()));
    } else if (auto* resign = std::get_if<resign_request>(&event)) {
      apply(core.resign(now(), resign->hold_off));
    } else if (auto* update = std::get_if<config_request>(&event)) {
      apply(core.update_config(now(), std::move(update->config)));
    } else if (auto* hook = std::get_if<hook_done>(&event)) {
      on_hook_done(*hook);
    } else if (std::holds_alternative<shutdown_request>(event)) {
      shutting_down = true;
      operation_cancel.emit(asio::cancellation_type::terminal);
      if (peer) peer->close();
      if (hook_cancel) hook_cancel->emit(asio::cancellation_type::terminal);
    }
  }

  /// Performs one step of the core, in the order the core prescribes.
  void apply(detail::step step) {
    if (step.cancel_operation) operation_cancel.emit(asio::cancellation_type::terminal);
    for (auto& notice : step.notices) publish(notice);
    if (step.operation) start_operation(std::move(*step.operation));
    core_wake_at = step.wake_at;
    refresh_snapshot();
  }

  // ------------------------------------------------------------------------------------------
  // Storage operations: one attempt bounded by request_timeout, retried by the policy.

  void start_operation(detail::storage_request request) {
    auto self = shared_from_this();
    auto slot = operation_cancel.slot();
    if (request.type == detail::storage_request::kind::read) {
      asio::co_spawn(strand, run_read(self), asio::bind_cancellation_slot(slot, asio::detached));
    } else if (request.type == detail::storage_request::kind::peer_check) {
      asio::co_spawn(strand, run_peer_check(self, std::move(request.peer)),
                     asio::bind_cancellation_slot(slot, asio::detached));
    } else {
      bool releasing = false;
      {
        std::lock_guard lock(mutex);
        releasing = release_pending;
      }
      asio::co_spawn(
          strand, run_write(self, std::move(request.body), std::move(request.condition), releasing),
          asio::bind_cancellation_slot(slot, asio::detached));
    }
  }

  // Start a storage request under store_mutex, or complete with errc::stopped (posted) once the
  // elector is destroyed. Named initiations, not lambdas: they end up inside co_await (style.md).
  struct initiate_guarded_get {
    std::shared_ptr<impl> self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key) const {
      std::lock_guard lock(self->store_mutex);
      if (self->store) {
        self->store->async_get(std::move(key), std::forward<Handler>(handler));
      } else {
        asio::post(self->strand, asio::append(std::forward<Handler>(handler),
                                              error_code(errc::stopped), get_result{}));
      }
    }
  };
  struct initiate_guarded_put {
    std::shared_ptr<impl> self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, std::string body,
                    put_condition condition) const {
      std::lock_guard lock(self->store_mutex);
      if (self->store) {
        self->store->async_put(std::move(key), std::move(body), std::move(condition),
                               std::forward<Handler>(handler));
      } else {
        asio::post(self->strand, asio::append(std::forward<Handler>(handler),
                                              error_code(errc::stopped), put_result{}));
      }
    }
  };
  static auto guarded_get(std::shared_ptr<impl> self, std::string key) {
    auto token = asio::as_tuple(asio::use_awaitable);
    return asio::async_initiate<decltype(token), get_signature>(
        initiate_guarded_get{std::move(self)}, token, std::move(key));
  }
  static auto guarded_put(std::shared_ptr<impl> self, std::string key, std::string body,
                          put_condition condition) {
    auto token = asio::as_tuple(asio::use_awaitable);
    return asio::async_initiate<decltype(token), put_signature>(
        initiate_guarded_put{std::move(self)}, token, std::move(key), std::move(body),
        std::move(condition));
  }

  static asio::awaitable<std::tuple<error_code, get_result>> read_attempt(
      std::shared_ptr<impl> self, std::string key, milliseconds timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(self->strand);
    timer.expires_after(timeout);
    const auto sent = detail::boot_clock::now();
    auto outcome = co_await (guarded_get(self, std::move(key)) ||
                             timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    if (outcome.index() == 0) {
      const auto& [ec, result] = std::get<0>(outcome);
      self->note_store_date(sent, result.info.server_date);
      self->note_refused_clock(ec);
      self->count_get(ec, result.found.has_value());
      co_return std::get<0>(std::move(outcome));
    }
    self->count_get(errc::timeout, false);
    get_result timed_out;
    timed_out.info.message = "no answer within request_timeout";
    co_return std::tuple<error_code, get_result>{errc::timeout, std::move(timed_out)};
  }

  static asio::awaitable<std::tuple<error_code, put_result>> write_attempt(
      std::shared_ptr<impl> self, std::string key, std::string body, put_condition condition,
      milliseconds timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(self->strand);
    timer.expires_after(timeout);
    const auto sent = detail::boot_clock::now();
    auto outcome =
        co_await (guarded_put(self, std::move(key), std::move(body), std::move(condition)) ||
                  timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    if (outcome.index() == 0) {
      const auto& [ec, result] = std::get<0>(outcome);
      self->note_store_date(sent, result.info.server_date);
      self->note_refused_clock(ec);
      self->count_put(ec);
      co_return std::get<0>(std::move(outcome));
    }
    self->count_put(errc::outcome_unknown);
    // The write may have reached the store: only a re-read can tell.
    put_result timed_out;
    timed_out.info.message = "no answer within request_timeout";
    co_return std::tuple<error_code, put_result>{errc::outcome_unknown, std::move(timed_out)};
  }

  /// The store refused a request as signed too far from its clock (S3 allows 15 minutes): name
  /// the clock and the offset measured, since no request will succeed until the clock is fixed.
  void note_refused_clock(const error_code& ec) const {
    if (ec != errc::clock_skewed) return;
    log(log_level::error,
        "the store refuses our requests: this system clock is too far from the store's "
        "(RequestTimeTooSkewed) " +
            store_clock.describe());
  }

  void count_get(const error_code& ec, bool found) {
    std::lock_guard lock(mutex);
    if (ec) {
      ++counters.s3_get.failed;
    } else if (found) {
      ++counters.s3_get.ok;
    } else {
      ++counters.s3_get.not_found;
    }
  }
  void count_put(const error_code& ec) {
    std::lock_guard lock(mutex);
    if (!ec) {
      ++counters.s3_put.ok;
    } else if (ec == errc::precondition_failed || ec == errc::conflict) {
      ++counters.s3_put.precondition_failed;
    } else {
      ++counters.s3_put.failed;
    }
  }

  /// Sleeps for `delay` on the strand; false when cancelled, also when the cancellation came
  /// after the timer had already fired (then the wait itself succeeds).
  static asio::awaitable<bool> pause(std::shared_ptr<impl> self, milliseconds delay) {
    asio::steady_timer timer(self->strand);
    timer.expires_after(delay);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return false;
    const auto state = co_await asio::this_coro::cancellation_state;
    co_return state.cancelled() == asio::cancellation_type::none;
  }

  // The operations below must end by pushing their completion: the core waits for it before
  // it does anything else. Asio's default throw_if_cancelled(true) would instead throw from the
  // first co_await after a cancellation (one that arrived after a retry pause ended), and
  // co_spawn(detached) swallows the exception: the elector would wait forever. So they turn it
  // off and test the cancellation state themselves.
  static asio::awaitable<void> run_read(std::shared_ptr<impl> self) {
    co_await asio::this_coro::throw_if_cancelled(false);
    const elector_config config = self->core.config();
    retry_schedule schedule(config.retry);
    std::tuple<error_code, get_result> outcome;
    for (;;) {
      outcome = co_await read_attempt(self, config.lock_key, config.request_timeout);
      const error_code ec = std::get<0>(outcome);
      if (!ec) break;
      if ((co_await asio::this_coro::cancellation_state).cancelled() !=
          asio::cancellation_type::none) {
        std::get<0>(outcome) = asio::error::operation_aborted;
        break;
      }
      auto delay = schedule.after_failure(ec);
      if (!delay) break;
      if (!co_await pause(self, *delay)) {
        std::get<0>(outcome) = asio::error::operation_aborted;
        break;
      }
    }
    self->push(read_done{std::get<0>(outcome), std::move(std::get<1>(outcome))});
  }

  static asio::awaitable<void> run_write(std::shared_ptr<impl> self, std::string body,
                                         put_condition condition, bool releasing) {
    co_await asio::this_coro::throw_if_cancelled(false);
    if (releasing) {
      // The loss of a stop or resignation was reported before this release, but its waiters'
      // completions were only queued on the strand, which this coroutine holds. Once the
      // released record is written, a follower may lead at once: let those completions reach
      // their executors first, so that no waiter hears of its loss after the next leader could
      // have heard of its gain.
      co_await asio::post(self->strand, asio::use_awaitable);
    }
    const elector_config config = self->core.config();
    retry_schedule schedule(config.retry);
    std::tuple<error_code, put_result> outcome;
    for (;;) {
      outcome =
          co_await write_attempt(self, config.lock_key, body, condition, config.request_timeout);
      const error_code ec = std::get<0>(outcome);
      if (!ec) break;
      if ((co_await asio::this_coro::cancellation_state).cancelled() !=
          asio::cancellation_type::none) {
        break;  // Keep the attempt's own error: a cancelled PUT may still have landed.
      }
      auto delay = schedule.after_failure(ec, write_retryable(ec));
      if (!delay) break;
      if (!co_await pause(self, *delay)) {
        std::get<0>(outcome) = asio::error::operation_aborted;
        break;
      }
    }
    self->push(write_done{std::get<0>(outcome), std::move(std::get<1>(outcome))});
  }

  void count_peer(const error_code& ec, const detail::peer_answer& answer) {
    std::lock_guard lock(mutex);
    if (ec) {
      ++counters.peer_check.failed;
    } else if (answer.leader) {
      ++counters.peer_check.ok;
    } else {
      ++counters.peer_check.not_found;
    }
  }

  /// One peer check: a plain check under the retry policy (each attempt bounded by
  /// peer_timeout inside the client), or a watch, which is not retried: its failure means
  /// "read the store now", which is what the core does next.
  static asio::awaitable<void> run_peer_check(std::shared_ptr<impl> self,
                                              detail::peer_check_request request) {
    co_await asio::this_coro::throw_if_cancelled(false);
    const elector_config config = self->core.config();
    std::shared_ptr<detail::peer_client> client = self->peer;
    std::tuple<error_code, detail::peer_answer> outcome;
    if (!client) {
      std::get<0>(outcome) = errc::invalid_config;  // peer mode switched off meanwhile
      self->push(peer_done{std::get<0>(outcome), {}});
      co_return;
    }
    std::optional<detail::peer_watch> watch;
    if (request.watch) watch = detail::peer_watch{*request.watch, request.term, request.serial};
    retry_schedule schedule(config.retry);
    for (;;) {
      outcome =
          co_await client->async_check(request.address, watch, asio::as_tuple(asio::use_awaitable));
      const error_code ec = std::get<0>(outcome);
      self->count_peer(ec, std::get<1>(outcome));
      if (!ec || watch) break;
      if ((co_await asio::this_coro::cancellation_state).cancelled() !=
          asio::cancellation_type::none) {
        std::get<0>(outcome) = asio::error::operation_aborted;
        break;
      }
      auto delay = schedule.after_failure(ec);
      if (!delay) break;
      if (!co_await pause(self, *delay)) {
        std::get<0>(outcome) = asio::error::operation_aborted;
        break;
      }
    }
    self->push(peer_done{std::get<0>(outcome), std::move(std::get<1>(outcome))});
  }

  // ------------------------------------------------------------------------------------------
  // Notices: leadership, holders, releases.

  void publish(const detail::core_notice& notice) {
    if (auto* gained = std::get_if<detail::leadership_gained>(&notice)) {
      on_gained(gained->term);
    } else if (auto* lost = std::get_if<detail::leadership_lost>(&notice)) {
      on_lost(lost->term, lost->reason);
    } else if (auto* changed = std::get_if<detail::leader_changed>(&notice)) {
      std::lock_guard lock(mutex);
      snapshot.leader_id = changed->leader_id;
      snapshot.leader_addr = changed->leader_addr;
      snapshot.term = changed->term;
      bump_version_locked();
      health.leader_id = changed->leader_id;
      if (!health.is_leader) health.term = changed->term;
      if (!release_pending) bump_health_locked();
    } else if (std::holds_alternative<detail::release_finished>(notice)) {
      std::lock_guard lock(mutex);
      resign_waiters.complete_all({error_code{}});
      release_pending = false;
      bump_health_locked();
    } else if (std::holds_alternative<detail::core_stopped>(notice)) {
      loop_running = false;
      std::lock_guard lock(mutex);
      snapshot.running = false;
      bump_version_locked();
      release_pending = false;
      bump_health_locked();
      stop_waiters.complete_all({error_code{}});
      leadership_waiters.complete_all({errc::stopped, leadership_lease{}});
      // A resignation that reached the core after the stop's own release was ignored by it.
      resign_waiters.complete_all({errc::stopped});
    }
  }

  void on_gained(std::uint64_t term) {
    leadership_lease lease;
    lease.term = term;
    lease.acquired_at = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mutex);
      lease.period = ++next_period;
    }
    const auto& hook = core.config().on_acquire;
    if (!hook) {
      publish_lease(lease);
      return;
    }
    // The hook runs beside the loop, so renewals go on while it works; leadership is reported
    // only once it succeeds.
    pending_lease = lease;
    hook_period = lease.period;
    hook_cancel = std::make_shared<asio::cancellation_signal>();
    asio::co_spawn(strand, run_acquire_hook(shared_from_this(), hook, lease),
                   asio::bind_cancellation_slot(hook_cancel->slot(), hook_finished{hook_cancel}));
  }

  // The completion handler of an acquire hook, owning the hook's cancellation signal. The
  // coroutine's cancellation state lives in that signal's slot, so the signal must live as long
  // as the coroutine; a hook slow to honour its cancellation may still run when the next
  // leadership starts the next hook, and reusing one signal freed the first one's state.
  struct hook_finished {
    std::shared_ptr<asio::cancellation_signal> signal;
    void operator()(std::exception_ptr) const {}
  };

  static asio::awaitable<void> run_acquire_hook(
      std::shared_ptr<impl> self, std::function<asio::awaitable<void>(std::uint64_t)> hook,
      leadership_lease lease) {
    hook_done done{lease.period, true, {}};
    try {
      co_await hook(lease.term);
    } catch (const std::exception& e) {
      done.succeeded = false;
      done.error = e.what();
    } catch (...) {
      // Without hook_done the elector would hold the lock without ever reporting it.
      done.succeeded = false;
      done.error = "non-standard exception";
    }
    self->push(std::move(done));
  }

  void on_hook_done(const hook_done& done) {
    if (done.period != hook_period) return;  // Leadership already lost; nothing to report.
    if (done.succeeded) {
      // The loop handles events before it looks at its timer: the renew deadline may have
      // passed while the hook ran (a paused process). Let the core demote first if it did,
      // which cancels the hook and clears hook_period, rather than publish a void lease.
      apply(core.on_timer(now()));
      if (done.period != hook_period) return;
    }
    hook_period = 0;
    if (done.succeeded && pending_lease && pending_lease->period == done.period) {
      hook_failures = 0;
      auto lease = *pending_lease;
      pending_lease.reset();
      publish_lease(lease);
      return;
    }
    pending_lease.reset();
    // A failed acquire hook gives leadership up and backs off, doubling up to the infrequent
    // interval, so a broken hook does not spin (the Go package re-ran it every 5 s).
    ++hook_failures;
    const auto& config = core.config();
    milliseconds hold_off = config.frequent_interval;
    for (unsigned i = 1; i < hook_failures && hold_off < config.infrequent_interval; ++i) {
      hold_off *= 2;
    }
    hold_off = std::min(hold_off, std::max(config.infrequent_interval, config.frequent_interval));
    log(log_level::error, "on_acquire hook failed, resigning error=\"" + done.error +
                              "\" hold_off_ms=" + std::to_string(hold_off.count()));
    apply(core.resign(now(), hold_off));
  }

  void publish_lease(const leadership_lease& lease) {
    std::lock_guard lock(mutex);
    published_lease = lease;
    snapshot.is_leader = true;
    leadership_deadline = core.leadership_deadline();
    bump_version_locked();
    ++counters.acquisitions;
    health.is_leader = true;
    health.term = lease.term;
    if (const lock_record* held = core.held_record()) health.record_json = encode_record(*held);
    health_record_sent = core.held_record_sent();
    ++health.serial;
    bump_health_locked();
    leadership_waiters.complete_all({error_code{}, lease});
  }

  void on_lost(std::uint64_t term, detail::loss_reason reason) {
    if (hook_period != 0) {
      hook_cancel->emit(asio::cancellation_type::terminal);
      hook_period = 0;
      pending_lease.reset();
    }
    std::optional<leadership_lease> lost;
    {
      std::lock_guard lock(mutex);
      lost = published_lease;
      published_lease.reset();
      leadership_deadline.reset();
      snapshot.is_leader = false;
      bump_version_locked();
      ++counters.losses;
      if (reason == detail::loss_reason::renew_deadline ||
          reason == detail::loss_reason::clock_refused) {
        ++counters.demotions;
      }
      health.is_leader = false;
      health.record_json.clear();
      health.lease_remaining = milliseconds{0};
      health_record_sent.reset();
      // A watching follower told of a stop or resignation reads the lock at once: tell it
      // only when the released record is there, so it finds the lock free.
      release_pending =
          reason == detail::loss_reason::stopped || reason == detail::loss_reason::resigned;
      if (!release_pending) bump_health_locked();
      if (lost) {
        const std::uint64_t period = lost->period;
        loss_waiters.complete_if([period](std::uint64_t waited) {
          return waited <= period ? std::optional<std::tuple<error_code>>(error_code{})
                                  : std::nullopt;
        });
      }
    }
    log(log_level::info, "leadership lost term=" + std::to_string(term));
    const auto& hook = core.config().on_lose;
    if (lost && hook) {
      asio::co_spawn(strand, run_lose_hook(shared_from_this(), hook, lost->term), asio::detached);
    }
  }

  static asio::awaitable<void> run_lose_hook(
      std::shared_ptr<impl> self, std::function<asio::awaitable<void>(std::uint64_t)> hook,
      std::uint64_t term) {
    try {
      co_await hook(term);
    } catch (const std::exception& e) {
      // Best effort, as in the Go package: the transition has happened already.
      self->log(log_level::warning, std::string("on_lose hook failed error=\"") + e.what() + "\"");
    } catch (...) {
      self->log(log_level::warning, "on_lose hook failed error=\"non-standard exception\"");
    }
  }

  // ------------------------------------------------------------------------------------------
  // The snapshot other threads read.

  void bump_version_locked() {
    ++snapshot.version;
    const auto status = snapshot;
    change_waiters.complete_if([&status](std::uint64_t seen) {
      return seen < status.version
                 ? std::optional<std::tuple<error_code, leadership_status>>({error_code{}, status})
                 : std::nullopt;
    });
  }

  void bump_health_locked() {
    const std::uint64_t version = ++health.version;
    health_waiters.complete_if([version](std::uint64_t seen) {
      return seen < version ? std::optional<std::tuple<error_code>>(error_code{}) : std::nullopt;
    });
  }

  void refresh_snapshot() {
    const auto core_status = core.status();
    std::lock_guard lock(mutex);
    if (core_status.last_renewal != last_renewal_seen) {
      // A write of ours landed: the acquisition of a period (counted when reported) or a
      // renewal within the period already seen writing.
      const std::uint64_t period = published_lease ? published_lease->period : 0;
      const bool renewal = core_status.last_renewal && core.is_leader() && period != 0 &&
                           period == renewal_period_seen;
      last_renewal_seen = core_status.last_renewal;
      renewal_period_seen = period;
      if (renewal) {
        ++counters.renewals;
        counters.renewal_latency.observe(std::chrono::duration_cast<std::chrono::microseconds>(
            detail::boot_clock::now() - *core_status.last_renewal));
        if (const lock_record* held = core.held_record()) {
          health.record_json = encode_record(*held);
        }
        health_record_sent = core.held_record_sent();
        ++health.serial;
        bump_health_locked();
      }
    }
    snapshot.mode = core_status.mode;
    snapshot.leader_last_seen = core_status.leader_last_seen;
    snapshot.consecutive_failures = core_status.consecutive_failures;
    snapshot.last_error = core_status.last_error;
    if (published_lease) leadership_deadline = core.leadership_deadline();
    if (core_status.last_election_time != snapshot.last_election_time) {
      snapshot.last_election_time = core_status.last_election_time;
      const auto status = snapshot;
      election_waiters.complete_if([&status](std::chrono::system_clock::time_point since) {
        return status.last_election_time && *status.last_election_time > since
                   ? std::optional<std::tuple<error_code, leadership_status>>(
                         {error_code{}, status})
                   : std::nullopt;
      });
    }
  }

  /// is_leader() as other threads see it: a paused process whose deadline passed is not
  /// leader even before its loop runs again to demote it.
  bool leading_locked() const {
    return published_lease && leadership_deadline &&
           detail::boot_clock::now() < *leadership_deadline;
  }
};

// ---------------------------------------------------------------------------------------------
// Public API.

namespace {

elector_config validated(elector_config config) {
  if (auto problem = config.validate()) {
    throw boost::system::system_error(errc::invalid_config, *problem);
  }
  return config;
}

}  // namespace

elector::elector(executor_type executor, storage& store, elector_config config)
    : impl_(std::make_shared<impl>(std::move(executor), store, validated(std::move(config)))) {}

elector::~elector() {
  auto self = impl_;
  {
    std::lock_guard lock(self->store_mutex);
    self->store = nullptr;  // From here on no request reaches the storage (see store_mutex).
  }
  {
    std::lock_guard lock(self->mutex);
    self->leadership_waiters.complete_all({errc::stopped, leadership_lease{}});
    self->loss_waiters.complete_all({errc::stopped});
    self->election_waiters.complete_all({errc::stopped, leadership_status{}});
    self->change_waiters.complete_all({errc::stopped, leadership_status{}});
    self->stop_waiters.complete_all({errc::stopped});
    self->resign_waiters.complete_all({errc::stopped});
    self->health_waiters.complete_all({errc::stopped});
  }
  asio::dispatch(self->strand, [self] {
    if (self->loop_running) self->push(shutdown_request{});
  });
}

elector::executor_type elector::get_executor() const {
  return impl_->strand.get_inner_executor();
}

void elector::start() {
  auto self = impl_;
  asio::dispatch(self->strand, [self] {
    if (self->loop_running || self->shutting_down) return;
    self->loop_running = true;
    {
      std::lock_guard lock(self->mutex);
      self->snapshot.running = true;
      self->bump_version_locked();
    }
    asio::co_spawn(self->strand, impl::run_loop(self), asio::detached);
  });
}

void elector::stop_impl(stop_handler handler) {
  auto self = impl_;
  {
    std::lock_guard lock(self->mutex);
    self->stop_waiters.add({}, std::move(handler));
  }
  asio::dispatch(self->strand, [self] {
    if (!self->loop_running) {
      std::lock_guard lock(self->mutex);
      self->stop_waiters.complete_all({error_code{}});
      return;
    }
    self->push(stop_request{});
  });
}

void elector::resign_impl(stop_handler handler) {
  auto self = impl_;
  {
    std::lock_guard lock(self->mutex);
    if (!self->published_lease) {
      detail::waiter_list<std::monostate> once(self->strand);
      once.add({}, std::move(handler));
      once.complete_all({errc::not_leader});
      return;
    }
    self->resign_waiters.add({}, std::move(handler));
  }
  asio::dispatch(self->strand, [self] {
    // The elector stopped since the check above (core_stopped completed the waiter): a queued
    // request would wrongly hold off the next run's first acquisition.
    if (!self->loop_running) return;
    // Hold off for two frequent intervals so that followers, which read every F, see the
    // released record and one of them takes over before this elector competes again.
    self->push(resign_request{self->core.config().frequent_interval * 2});
  });
}

void elector::wait_for_leadership_impl(lease_handler handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->leadership_waiters.add({}, std::move(handler));
  if (impl_->published_lease && impl_->leading_locked()) {
    const auto lease = *impl_->published_lease;
    impl_->leadership_waiters.complete_all({error_code{}, lease});
  }
}

void elector::wait_for_loss_impl(leadership_lease lease, stop_handler handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->loss_waiters.add(lease.period, std::move(handler));
  const auto& current = impl_->published_lease;
  if (!current || current->period != lease.period) {
    const std::uint64_t period = lease.period;
    impl_->loss_waiters.complete_if([period](std::uint64_t waited) {
      return waited == period ? std::optional<std::tuple<error_code>>(error_code{}) : std::nullopt;
    });
  }
}

void elector::wait_for_next_election_impl(std::chrono::system_clock::time_point since,
                                          status_handler handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->election_waiters.add(since, std::move(handler));
  const auto status = impl_->snapshot;
  if (status.last_election_time && *status.last_election_time > since) {
    impl_->election_waiters.complete_if([&status](std::chrono::system_clock::time_point s) {
      return *status.last_election_time > s
                 ? std::optional<std::tuple<error_code, leadership_status>>({error_code{}, status})
                 : std::nullopt;
    });
  }
}

void elector::wait_for_change_impl(std::uint64_t seen_version, status_handler handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->change_waiters.add(seen_version, std::move(handler));
  const auto status = impl_->snapshot;
  if (status.version > seen_version) {
    impl_->change_waiters.complete_if([&status](std::uint64_t seen) {
      return seen < status.version
                 ? std::optional<std::tuple<error_code, leadership_status>>({error_code{}, status})
                 : std::nullopt;
    });
  }
}

bool elector::is_leader() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->leading_locked();
}

std::string elector::leader_id() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->snapshot.leader_id;
}

leadership_status elector::status() const {
  std::lock_guard lock(impl_->mutex);
  leadership_status status = impl_->snapshot;
  status.is_leader = impl_->leading_locked();
  status.clock_offset = impl_->store_clock.offset();
  return status;
}

elector_counters elector::counters() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->counters;
}

leadership_snapshot elector::snapshot() const {
  std::lock_guard lock(impl_->mutex);
  leadership_snapshot out = impl_->health;
  if (out.is_leader) {
    // As is_leader(): a paused process past its deadline does not claim leadership.
    const auto now = detail::boot_clock::now();
    if (!impl_->leading_locked()) {
      out.is_leader = false;
      out.record_json.clear();
    } else {
      out.lease_remaining = std::chrono::ceil<milliseconds>(*impl_->leadership_deadline - now);
      // Rounded down: a follower counts the lease from (answer received − age), which must not
      // be earlier than the write was sent.
      if (impl_->health_record_sent) {
        out.write_age = std::max(
            milliseconds{0}, std::chrono::floor<milliseconds>(now - *impl_->health_record_sent));
      }
    }
  }
  return out;
}

void elector::wait_change_impl(std::uint64_t seen_version,
                               asio::any_completion_handler<change_signature> handler) {
  std::lock_guard lock(impl_->mutex);
  impl_->health_waiters.add(seen_version, std::move(handler));
  const std::uint64_t version = impl_->health.version;
  if (version > seen_version) {
    impl_->health_waiters.complete_if([version](std::uint64_t seen) {
      return seen < version ? std::optional<std::tuple<error_code>>(error_code{}) : std::nullopt;
    });
  }
}

void latency_histogram::observe(std::chrono::microseconds latency) noexcept {
  std::size_t bucket = 0;
  while (bucket < bounds_ms.size() && latency > std::chrono::milliseconds{bounds_ms[bucket]}) {
    ++bucket;
  }
  ++counts[bucket];
  ++count;
  sum += latency;
}

elector_config elector::config() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->config_snapshot;
}

std::optional<std::string> elector::update_config(elector_config config) {
  auto self = impl_;
  std::optional<std::shared_ptr<detail::peer_client>> new_peer;
  {
    std::lock_guard lock(self->mutex);
    if (auto problem = validate_update(self->config_snapshot, config)) return problem;
    if (!same_peer_settings(self->config_snapshot, config)) {
      try {
        new_peer = make_peer_client(self->strand, config);
      } catch (const boost::system::system_error& e) {
        return std::string(e.what());
      }
    }
    self->config_snapshot = std::move(config);
  }
  if (new_peer) {
    // Checks in flight keep the client they started with (they hold a reference).
    asio::dispatch(self->strand, [self, client = std::move(*new_peer)] { self->peer = client; });
  }
  asio::dispatch(self->strand, [self] {
    // The snapshot as it is now, not the caller's copy: with update_config() called from two
    // threads, the strand may run their requests in the other order, and the last one to run
    // must leave the core with the configuration config() reports.
    elector_config latest;
    {
      std::lock_guard lock(self->mutex);
      latest = self->config_snapshot;
    }
    if (self->loop_running) {
      self->push(config_request{std::move(latest)});
    } else {
      // Stopped (or never started): the core keeps its state, e.g. the writes it remembers.
      self->core.update_config(self->now(), std::move(latest));
    }
  });
  return std::nullopt;
}

}  // namespace s3lect
