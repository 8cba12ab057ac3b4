// Signals kept until handled: one that arrives while another branch of an `||` wins is still
// there afterwards (signal_set::async_wait in the `||` itself lost it, and a SIGTERM that came as
// the node was elected was never acted on).
#include "cli/signal_inbox.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <optional>

namespace {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;
using s3lect::cli::signal_inbox;

/// Completes after `hops` turns of the event loop.
asio::awaitable<void> after_hops(int hops) {
  for (int i = 0; i < hops; ++i) co_await asio::post(asio::use_awaitable);
}

/// Raises SIGUSR2 and, in the same turns, lets another branch win an `||` against the inbox;
/// then records which signal the inbox holds.
asio::awaitable<void> race(asio::io_context& io, signal_inbox& inbox, std::optional<int>& held,
                           int hops) {
  ::raise(SIGUSR2);
  co_await (after_hops(hops) || inbox.wait());
  co_await inbox.wait();  // Waits for ever (the test then gives up) if the signal was lost.
  held = inbox.take();
  io.stop();
}

TEST(SignalInbox, KeepsASignalThatCameWhileAnotherBranchWon) {
  for (int hops = 0; hops < 4; ++hops) {
    asio::io_context io;
    asio::signal_set caught(io, SIGUSR2);
    signal_inbox inbox(caught);
    std::optional<int> held;
    asio::co_spawn(io, race(io, inbox, held, hops), asio::detached);
    io.run_for(5s);
    EXPECT_EQ(held, std::optional<int>(SIGUSR2))
        << "lost with the other branch winning after " << hops << " turns";
    EXPECT_FALSE(inbox.take()) << "taken once only";
  }
}

TEST(SignalInbox, KeepsSeveralSignalsInTheOrderTheyCame) {
  asio::io_context io;
  asio::signal_set caught(io, SIGUSR1, SIGUSR2);
  signal_inbox inbox(caught);
  ::raise(SIGUSR1);
  ::raise(SIGUSR2);
  io.run_for(200ms);
  EXPECT_EQ(inbox.take(), std::optional<int>(SIGUSR1));
  EXPECT_EQ(inbox.take(), std::optional<int>(SIGUSR2));
  EXPECT_EQ(inbox.take(), std::nullopt);
}

}  // namespace
