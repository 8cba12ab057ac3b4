// The signals a subcommand catches, kept as state until they are handled. Awaiting
// signal_set::async_wait inside an `||` loses a signal whenever another branch completes in the
// same turn: the signal is taken off the set, and `||` keeps only the first branch's result
// (a SIGTERM that came as the node was elected was dropped, and s3lect ran on until a second
// one). Here one coroutine alone takes signals off the set and queues them; waiting for the
// queue can be cancelled without losing anything.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <memory>
#include <optional>

namespace s3lect::cli {

class signal_inbox {
 public:
  /// Starts taking the signals `signals` catches. `signals` must outlive the inbox, and the
  /// inbox the io_context's last run.
  explicit signal_inbox(boost::asio::signal_set& signals);
  ~signal_inbox();
  signal_inbox(const signal_inbox&) = delete;
  signal_inbox& operator=(const signal_inbox&) = delete;

  /// Completes once a signal is pending (at once if one is). Cancellation: any type; no signal
  /// is lost.
  boost::asio::awaitable<void> wait();

  /// Takes the oldest pending signal, if any.
  std::optional<int> take();

 private:
  struct state {
    std::deque<int> pending;
    std::optional<boost::asio::steady_timer> wake;
    bool closed = false;
  };
  static boost::asio::awaitable<void> pump(boost::asio::signal_set& signals,
                                           std::shared_ptr<state> shared);

  boost::asio::signal_set& signals_;
  std::shared_ptr<state> state_;
};

}  // namespace s3lect::cli
