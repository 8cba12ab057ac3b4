// health_handler: the protocol of health_protocol.hpp plus the one thing it cannot do without
// I/O, holding a watch until the leadership changes. Asio only; no Beast, so embedding servers
// and health_server share it cheaply.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>

#include "certificate_names.hpp"
#include "health_protocol.hpp"
#include "watch_slots.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;
using detail::routed_request;
using detail::watch_outcome;

namespace detail {

struct health_handler_state : std::enable_shared_from_this<health_handler_state> {
  using executor_type = asio::any_io_executor;

  health_handler_state(executor_type ex, leadership_source& src, health_handler_config cfg)
      : executor(std::move(ex)),
        strand(asio::make_strand(executor)),
        config(std::move(cfg)),
        source(&src),
        slots(config.max_watchers, config.max_watchers_per_source) {}

  /// The source's snapshot, or nullopt once detached.
  std::optional<leadership_snapshot> snapshot() const {
    const std::lock_guard lock(source_mutex);
    if (source == nullptr) return std::nullopt;
    return source->snapshot();
  }

  /// Hands `claim` to the source, unless detached.
  void note_candidate(const candidate_claim& claim) const {
    const std::lock_guard lock(source_mutex);
    if (source != nullptr) source->note_candidate(claim);
  }

  /// The source's async_wait_change, or errc::stopped once detached. The source is called under
  /// the mutex so that detach() cannot return while a call is under way: after it, the source
  /// may be destroyed. Asio operations never complete inline, so the lock is never re-entered.
  template <class CompletionToken>
  auto async_wait_change(std::uint64_t seen_version, CompletionToken&& token) {
    return asio::async_initiate<CompletionToken, leadership_source::change_signature>(
        initiate_guarded_wait{shared_from_this()}, token, seen_version);
  }

  struct initiate_guarded_wait {
    std::shared_ptr<health_handler_state> self;
    template <class Handler>
    void operator()(Handler&& handler, std::uint64_t seen_version) const {
      asio::any_completion_handler<leadership_source::change_signature> erased(
          std::forward<Handler>(handler));
      std::unique_lock lock(self->source_mutex);
      if (self->source != nullptr) {
        self->source->async_wait_change(seen_version, std::move(erased));
        return;
      }
      lock.unlock();
      // post() hands the handler on to its own associated executor.
      asio::post(self->strand, asio::append(std::move(erased), error_code(errc::stopped)));
    }
  };

  /// A watch being held: its timer wakes it, `evicted` tells it to answer `refused`.
  struct held_watch {
    watch_slots::ticket ticket;
    asio::steady_timer* timer;
    bool evicted = false;
  };

  /// Wakes every held watch; it then sees `stopping` and answers.
  struct cancel_watches {
    std::shared_ptr<health_handler_state> self;
    void operator()() const {
      for (held_watch* watch : self->held) watch->timer->cancel();
    }
  };

  /// Strand only. Wakes the watch that gave its slot up; it answers `refused`.
  void evict(watch_slots::ticket ticket) {
    for (held_watch* watch : held) {
      if (watch->ticket != ticket) continue;
      watch->evicted = true;
      watch->timer->cancel();
    }
  }

  void stop() {
    stopping = true;
    asio::post(strand, cancel_watches{shared_from_this()});
  }

  void detach() {
    {
      const std::lock_guard lock(source_mutex);
      source = nullptr;
    }
    stop();
  }

  executor_type executor;
  asio::strand<executor_type> strand;
  const health_handler_config config;

  mutable std::mutex source_mutex;
  leadership_source* source;  // guarded by source_mutex; null once detached

  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> watches{0};
  watch_slots slots;              // strand only
  std::vector<held_watch*> held;  // strand only
};

}  // namespace detail

namespace {

using state_ptr = std::shared_ptr<detail::health_handler_state>;

struct handle_result {
  error_code ec;
  health_response response;
};

handle_result answer(health_response response) {
  return {{}, std::move(response)};
}

handle_result stopped_result() {
  return {errc::stopped, detail::stopped_response()};
}

/// The claim a request carries, as reported to the source; nullopt without one.
std::optional<candidate_claim> claim_of(const health_request& request,
                                        const routed_request& routed) {
  if (!routed.candidate) return std::nullopt;
  candidate_claim claim;
  claim.id = routed.candidate->id;
  claim.priority = routed.candidate->priority;
  claim.token = routed.candidate->token;
  claim.source = request.source;
  // A certificate vouches only for an id it names: a monitoring client's (CN=monitor) claiming
  // a node's id is checked against that node's registration, like anyone's.
  claim.verified_client =
      request.verified_client && detail::certificate_names_id(request.client_names, claim.id);
  return claim;
}

/// A watch let into a slot, with the claim its request carried.
struct admitted_watch {
  detail::watch_slots::ticket ticket;
  std::optional<candidate_claim> claim;
};

/// Holds a watch's slot, its place in the count and its timer in the list stop() wakes, and
/// tells the source of the claimant's watch from beginning to end (whatever ends it).
class watch_registration {
 public:
  watch_registration(detail::health_handler_state& st, admitted_watch admitted,
                     asio::steady_timer& timer)
      : state_(st), watch_{admitted.ticket, &timer}, claim_(std::move(admitted.claim)) {
    ++state_.watches;
    state_.held.push_back(&watch_);
    note(candidate_claim::kind::watch_begin);
  }
  ~watch_registration() {
    try {
      note(candidate_claim::kind::watch_end);
    } catch (...) {
      // A destructor must not throw; a source that failed to hear the end only shows the
      // claimant as watching until its leadership changes (which clears its candidates).
    }
    --state_.watches;
    std::erase(state_.held, &watch_);
    state_.slots.release(watch_.ticket);
  }
  watch_registration(const watch_registration&) = delete;
  watch_registration& operator=(const watch_registration&) = delete;

  /// Its slot went to a client with a better claim (watch_slots.hpp).
  bool evicted() const noexcept { return watch_.evicted; }

 private:
  void note(candidate_claim::kind event) {
    if (!claim_) return;
    claim_->event = event;
    // Tickets are unique for the handler's life: they pair a begin with its end.
    claim_->watch_id = watch_.ticket;
    state_.note_candidate(*claim_);
  }

  detail::health_handler_state& state_;
  detail::health_handler_state::held_watch watch_;
  std::optional<candidate_claim> claim_;
};

/// Holds a watch whose state still holds at arrival, in the slot `ticket`. Runs on the strand.
asio::awaitable<handle_result> hold_watch(state_ptr st, detail::watch_params watch,
                                          leadership_snapshot snapshot, admitted_watch admitted) {
  const auto duration = std::min(watch.duration, st->config.max_watch);
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  const watch_registration registration(*st, std::move(admitted), timer);
  watch_outcome outcome = watch_outcome::timeout;
  for (;;) {
    if (!detail::holds_watch(snapshot, watch)) {
      outcome = watch_outcome::changed;
      break;
    }
    if (registration.evicted()) {
      outcome = watch_outcome::refused;
      break;
    }
    if (st->stopping) {
      outcome = watch_outcome::stopping;
      break;
    }
    if (timer.expiry() <= std::chrono::steady_clock::now()) break;

    // Named before the co_await: GCC 12 miscompiles temporaries built inside it
    // (docs/architecture.md#gcc-12-coroutine-rules).
    auto change = st->async_wait_change(snapshot.version, asio::deferred);
    auto tick = timer.async_wait(asio::deferred);
    auto race = asio::experimental::make_parallel_group(std::move(change), std::move(tick));
    const asio::experimental::wait_for_one first_wins;
    const auto [order, change_ec, tick_ec] =
        co_await race.async_wait(first_wins, asio::use_awaitable);
    (void)tick_ec;
    const asio::cancellation_state cancel_state = co_await asio::this_coro::cancellation_state;
    if (cancel_state.cancelled() != asio::cancellation_type::none) {
      co_return handle_result{asio::error::operation_aborted, {}};
    }

    std::optional<leadership_snapshot> now = st->snapshot();
    if (!now) co_return stopped_result();
    snapshot = std::move(*now);
    if (order[0] == 0 && change_ec && change_ec != asio::error::operation_aborted) {
      // The source cannot wait any more (an elector being destroyed): answer with what it
      // says now rather than spin on a wait that fails at once.
      outcome =
          detail::holds_watch(snapshot, watch) ? watch_outcome::stopping : watch_outcome::changed;
      break;
    }
  }
  co_return answer(detail::watch_response(snapshot, outcome));
}

asio::awaitable<handle_result> handle_request(state_ptr st, health_request request) {
  // Any cancellation type ends a watch: a waiting answer has no side effect to protect. It is
  // reported as operation_aborted, not thrown: an exception would escape through co_spawn.
  co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
  co_await asio::this_coro::throw_if_cancelled(false);
  const routed_request routed =
      detail::route_request(request.method, request.target, st->config.path);
  if (auto rejection = detail::rejection_response(routed)) co_return answer(std::move(*rejection));
  std::optional<leadership_snapshot> snapshot = st->snapshot();
  if (!snapshot) co_return stopped_result();
  std::optional<candidate_claim> claim = claim_of(request, routed);
  if (claim) st->note_candidate(*claim);
  if (routed.type == routed_request::kind::read) {
    co_return answer(detail::leadership_response(*snapshot));
  }
  if (!detail::holds_watch(*snapshot, routed.watch)) {
    co_return answer(detail::watch_response(*snapshot, watch_outcome::changed));
  }
  if (st->stopping) co_return answer(detail::watch_response(*snapshot, watch_outcome::stopping));
  const detail::watch_slots::decision slot =
      st->config.max_watch == std::chrono::milliseconds::zero()
          ? detail::watch_slots::decision{}
          : st->slots.admit(request.source, request.verified_client);
  if (!slot.admitted) co_return answer(detail::watch_response(*snapshot, watch_outcome::refused));
  if (slot.evicted) st->evict(*slot.evicted);
  admitted_watch admitted{*slot.admitted, std::move(claim)};
  co_return co_await hold_watch(std::move(st), routed.watch, std::move(*snapshot),
                                std::move(admitted));
}

/// Adapts co_spawn's `void(exception_ptr, handle_result)` to the public signature.
struct deliver {
  asio::any_completion_handler<health_handler::handle_signature> handler;

  void operator()(std::exception_ptr failure, handle_result result) {
    // co_spawn leaves its cancellation handler in the slot; a later emission must not reach a
    // finished coroutine.
    handler.get_cancellation_slot().clear();
    // Only the source's snapshot() or an allocation can throw: not ours to swallow.
    if (failure) std::rethrow_exception(failure);
    std::move(handler)(result.ec, std::move(result.response));
  }
};

}  // namespace

health_handler::health_handler(executor_type executor, leadership_source& source,
                               health_handler_config config) {
  if (auto error = config.validate()) {
    throw boost::system::system_error(errc::invalid_config, "health_handler_config." + *error);
  }
  state_ = std::make_shared<detail::health_handler_state>(std::move(executor), source,
                                                          std::move(config));
}

health_handler::~health_handler() {
  detach();
}

health_handler::executor_type health_handler::get_executor() const {
  return state_->executor;
}

const health_handler_config& health_handler::config() const noexcept {
  return state_->config;
}

health_response health_handler::handle(const health_request& request) const {
  const routed_request routed =
      detail::route_request(request.method, request.target, state_->config.path);
  if (auto rejection = detail::rejection_response(routed)) return std::move(*rejection);
  const std::optional<leadership_snapshot> snapshot = state_->snapshot();
  if (!snapshot) return detail::stopped_response();
  if (auto claim = claim_of(request, routed)) state_->note_candidate(*claim);
  if (routed.type == routed_request::kind::read) return detail::leadership_response(*snapshot);
  return detail::watch_response(*snapshot, detail::holds_watch(*snapshot, routed.watch)
                                               ? watch_outcome::refused
                                               : watch_outcome::changed);
}

void health_handler::handle_impl(health_request request,
                                 asio::any_completion_handler<handle_signature> handler) {
  auto slot = handler.get_cancellation_slot();
  auto executor = asio::get_associated_executor(handler, state_->strand);
  asio::co_spawn(state_->strand, handle_request(state_, std::move(request)),
                 asio::bind_cancellation_slot(
                     slot, asio::bind_executor(executor, deliver{std::move(handler)})));
}

void health_handler::stop() {
  state_->stop();
}

void health_handler::detach() {
  state_->detach();
}

std::size_t health_handler::active_watches() const noexcept {
  return state_->watches;
}

}  // namespace s3lect::inline v1
