// The elector's loop: one coroutine on the strand that feeds the core its events and its timer,
// and performs the steps the core answers with. Decides nothing itself.
#include "elector_impl.hpp"
#include "log_text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using detail::steady_time;

void elector::impl::log(log_level level, const std::string& line) const {
  core.config().log.log(level, line + " id=" + log_text::value(core.config().server_id));
}

detail::instant elector::impl::now() const {
  const auto boot = clock.now();
  return {boot, store_clock.store_now(boot)};
}

asio::awaitable<void> elector::impl::run_loop(std::shared_ptr<impl> self) {
  self->apply(self->core.start(self->now()));
  detail::loop_state& loop = self->loop;
  while (!loop.shutting_down) {
    if (!loop.events.empty()) {
      detail::loop_event event = std::move(loop.events.front());
      loop.events.pop_front();
      self->handle(std::move(event));
      continue;
    }
    if (!loop.running) break;
    if (loop.core_wake_at && self->clock.now() >= *loop.core_wake_at) {
      loop.core_wake_at.reset();
      self->apply(self->core.on_timer(self->now()));
      continue;
    }
    loop.wake_timer.expires_at(loop.core_wake_at.value_or(steady_time::max()));
    co_await loop.wake_timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  loop.running = false;
}

void elector::impl::push(detail::loop_event event) {
  loop.events.push_back(std::move(event));
  loop.wake_timer.cancel();
}

void elector::impl::handle(detail::loop_event event) {
  if (auto* read = std::get_if<detail::read_done>(&event)) {
    apply(core.on_read_done(now(), read->ec, read->result));
  } else if (auto* write = std::get_if<detail::write_done>(&event)) {
    apply(core.on_write_done(now(), write->ec, write->result));
  } else if (auto* checked = std::get_if<detail::peer_done>(&event)) {
    apply(core.on_peer_done(now(), checked->ec, checked->answer));
  } else if (std::holds_alternative<detail::stop_request>(event)) {
    apply(core.stop(now()));
  } else if (auto* resign = std::get_if<detail::resign_request>(&event)) {
    apply(core.resign(now(), resign->hold_off, std::move(resign->successor)));
  } else if (auto* update = std::get_if<detail::config_request>(&event)) {
    apply(core.update_config(now(), std::move(update->config)));
  } else if (auto* listed = std::get_if<detail::candidates_changed>(&event)) {
    apply(core.on_candidates(now(), std::move(listed->list)));
  } else if (auto* hook = std::get_if<detail::hook_done>(&event)) {
    on_hook_done(*hook);
  } else if (std::holds_alternative<detail::shutdown_request>(event)) {
    loop.shutting_down = true;
    loop.operation_cancel.emit(asio::cancellation_type::terminal);
    if (peer) peer->close();
    if (hooks.cancel) hooks.cancel->emit(asio::cancellation_type::terminal);
  }
}

void elector::impl::apply(detail::step step) {
  if (step.cancel_operation) loop.operation_cancel.emit(asio::cancellation_type::terminal);
  for (auto& notice : step.notices) publish(notice);
  if (step.operation) start_operation(std::move(*step.operation));
  loop.core_wake_at = step.wake_at;
  publisher.refresh(core);
  give_up_if_refused();
}

void elector::impl::give_up_if_refused() {
  if (loop.giving_up || !loop.running || !core.refused_for_good() || !publisher.run_pending()) {
    return;
  }
  const detail::core_status status = core.status();
  log(log_level::error,
      "the store refuses this elector, stopping error=" + log_text::value(status.last_error));
  loop.giving_up = true;
  publisher.give_up(status.last_error_code);
  push(detail::stop_request{});
}

void elector::impl::publish(const detail::core_notice& notice) {
  if (auto* gained = std::get_if<detail::leadership_gained>(&notice)) {
    reset_candidates(true);
    on_gained(gained->term);
  } else if (auto* lost = std::get_if<detail::leadership_lost>(&notice)) {
    reset_candidates(false);
    on_lost(lost->term, lost->reason);
  } else if (auto* changed = std::get_if<detail::leader_changed>(&notice)) {
    publisher.leader_changed(*changed);
    // A new leader verifies claims afresh: our registration must say what our claims do.
    register_candidate(core.config());
  } else if (auto* released = std::get_if<detail::release_finished>(&notice)) {
    publisher.release_finished(*released);
  } else if (auto* advised = std::get_if<detail::handover_advised>(&notice)) {
    advice.advise(advised->term, advised->successor);
  } else if (std::holds_alternative<detail::core_stopped>(notice)) {
    loop.running = false;
    loop.giving_up = false;
    reset_candidates(false);
    publisher.stopped();
  }
}

}  // namespace s3lect::inline v1
