// The elector's hooks: on_acquire runs beside the loop between the gain of the lock and its
// report (renewals go on meanwhile), on_lose after a reported leadership ended. Both run on
// hook_strand, over the application's executor: never on the loop's strand, which a hook that
// blocks would hold up. What they tell the loop goes back to the loop's strand. The back-off
// after a failed on_acquire is decided by acquire_hook_backoff (hold_offs.hpp).
#include "elector_impl.hpp"
#include "log_text.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <exception>
#include <optional>
#include <string>

namespace s3lect::inline v1 {

namespace asio = boost::asio;

namespace {

// The completion handler of an acquire hook, owning the hook's cancellation signal. The
// coroutine's cancellation state lives in that signal's slot, so the signal must live as long
// as the coroutine; a hook slow to honour its cancellation may still run when the next
// leadership starts the next hook, and reusing one signal freed the first one's state.
struct hook_finished {
  std::shared_ptr<asio::cancellation_signal> signal;
  void operator()(std::exception_ptr) const {}
};

// Hands an acquire hook's outcome to the loop, on the loop's strand. (A template because
// elector::impl is private to the elector.)
template <class Impl>
struct hook_reported {
  std::shared_ptr<Impl> self;
  detail::hook_done done;
  void operator()() { self->push(std::move(done)); }
};

// Logs a failed lose hook on the loop's strand, where the configuration the log line reads
// (its logger, the server id) is written by update_config().
template <class Impl>
struct lose_hook_failed {
  std::shared_ptr<Impl> self;
  std::string error;
  void operator()() const {
    self->log(log_level::warning, "on_lose hook failed error=" + log_text::value(error));
  }
};

// Cancels a running acquire hook from its own strand: a cancellation signal must be emitted
// where the operation it cancels runs.
struct cancel_hook {
  std::shared_ptr<asio::cancellation_signal> signal;
  void operator()() const { signal->emit(asio::cancellation_type::terminal); }
};

}  // namespace

void elector::impl::on_gained(std::uint64_t term) {
  leadership_lease lease;
  lease.term = term;
  lease.acquired_at = std::chrono::steady_clock::now();
  lease.period = publisher.next_period();
  const auto& hook = core.config().on_acquire;
  if (!hook) {
    publisher.publish_lease(lease, core);
    return;
  }
  // The hook runs beside the loop, so renewals go on while it works; leadership is reported
  // only once it succeeds.
  hooks.pending_lease = lease;
  hooks.period = lease.period;
  hooks.cancel = std::make_shared<asio::cancellation_signal>();
  // Posted, then spawned: co_spawn dispatches, and a dispatch to a strand that is idle runs it
  // inline on this thread, inside the loop's strand, which the hook would then hold.
  asio::post(hook_strand, [self = shared_from_this(), hook, lease, cancel = hooks.cancel] {
    asio::co_spawn(self->hook_strand, run_acquire_hook(self, hook, lease),
                   asio::bind_cancellation_slot(cancel->slot(), hook_finished{cancel}));
  });
}

asio::awaitable<void> elector::impl::run_acquire_hook(std::shared_ptr<impl> self,
                                                      hook_function hook, leadership_lease lease) {
  detail::hook_done done{lease.period, true, {}};
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
  asio::dispatch(self->strand, hook_reported<impl>{self, std::move(done)});
}

void elector::impl::on_hook_done(const detail::hook_done& done) {
  if (done.period != hooks.period) return;  // Leadership already lost; nothing to report.
  if (done.succeeded) {
    // The loop handles events before it looks at its timer: the renew deadline may have passed
    // while the hook ran (a paused process). Let the core demote first if it did, which
    // cancels the hook and clears hooks.period, rather than publish a void lease.
    apply(core.on_timer(now()));
    if (done.period != hooks.period) return;
  }
  hooks.period = 0;
  std::optional<leadership_lease> lease = std::exchange(hooks.pending_lease, std::nullopt);
  if (done.succeeded && lease && lease->period == done.period) {
    hooks.backoff.after_success();
    publisher.publish_lease(*lease, core);
    return;
  }
  const std::chrono::milliseconds hold_off = hooks.backoff.after_failure(core.config());
  log(log_level::error, "on_acquire hook failed, resigning error=" + log_text::value(done.error) +
                            " hold_off_ms=" + std::to_string(hold_off.count()));
  apply(core.resign(now(), hold_off));
}

void elector::impl::on_lost(std::uint64_t term, detail::loss_reason reason) {
  if (hooks.period != 0) {
    asio::post(hook_strand, cancel_hook{hooks.cancel});
    hooks.period = 0;
    hooks.pending_lease.reset();
  }
  const std::optional<leadership_lease> lost = publisher.lose(reason);
  advice.ended(term);
  log(log_level::info, "leadership lost term=" + std::to_string(term));
  const auto& hook = core.config().on_lose;
  if (lost && hook) {
    asio::post(hook_strand, [self = shared_from_this(), hook, term = lost->term] {
      asio::co_spawn(self->hook_strand, run_lose_hook(self, hook, term), asio::detached);
    });
  }
}

asio::awaitable<void> elector::impl::run_lose_hook(std::shared_ptr<impl> self, hook_function hook,
                                                   std::uint64_t term) {
  std::optional<std::string> failed;
  try {
    co_await hook(term);
  } catch (const std::exception& e) {
    failed = e.what();
  } catch (...) {
    failed = "non-standard exception";
  }
  // Best effort, as in the Go package: the transition has happened already. Logged from the
  // loop's strand: this is the hook's strand, which must not read the configuration.
  if (failed) asio::dispatch(self->strand, lose_hook_failed<impl>{self, std::move(*failed)});
}

}  // namespace s3lect::inline v1
