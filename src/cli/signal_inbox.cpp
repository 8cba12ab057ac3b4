#include "cli/signal_inbox.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace s3lect::cli {

namespace asio = boost::asio;

signal_inbox::signal_inbox(asio::signal_set& signals)
    : signals_(signals), state_(std::make_shared<state>()) {
  state_->wake.emplace(signals.get_executor());
  state_->wake->expires_at(asio::steady_timer::time_point::max());
  asio::co_spawn(signals.get_executor(), pump(signals, state_), asio::detached);
}

signal_inbox::~signal_inbox() {
  state_->closed = true;
  boost::system::error_code ignored;
  signals_.cancel(ignored);
}

asio::awaitable<void> signal_inbox::pump(asio::signal_set& signals, std::shared_ptr<state> shared) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  for (;;) {
    auto [error, signal] = co_await signals.async_wait(token);
    if (error || shared->closed) co_return;
    shared->pending.push_back(signal);
    shared->wake->cancel();
  }
}

asio::awaitable<void> signal_inbox::wait() {
  const auto token = asio::as_tuple(asio::use_awaitable);
  while (state_->pending.empty()) {
    // The pump cancels the timer when a signal comes; the timer never expires otherwise.
    state_->wake->expires_at(asio::steady_timer::time_point::max());
    const auto [error] = co_await state_->wake->async_wait(token);
    // Aborted with nothing pending: the caller cancelled the wait.
    if (error == asio::error::operation_aborted && state_->pending.empty()) co_return;
  }
}

std::optional<int> signal_inbox::take() {
  if (state_->pending.empty()) return std::nullopt;
  const int signal = state_->pending.front();
  state_->pending.pop_front();
  return signal;
}

}  // namespace s3lect::cli
