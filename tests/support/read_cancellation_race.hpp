// Reads raced against timers of about their round trip, on a strand of an io_context that runs
// on four threads. When a timer wins, the awaitable operator emits cancellation on that strand
// while the read may be finishing on the storage's own strand. A storage that clears the
// caller's cancellation slot anywhere but on the caller's executor races that emission, which
// ThreadSanitizer reports; everywhere, each read must complete exactly once, and only succeed.
#pragma once

#include <s3lect/storage.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace s3lect::test {

struct read_race_result {
  int finished = 0;    ///< Reads that completed (won or cancelled).
  int unexpected = 0;  ///< Reads that won with an error.
};

/// `rounds` reads of `key`, each raced against a timer of 0 to `max_delay` microseconds.
inline boost::asio::awaitable<void> race_reads_against_timers(storage& store, std::string key,
                                                              int rounds, int max_delay,
                                                              read_race_result& result) {
  namespace asio = boost::asio;
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (int i = 0; i < rounds; ++i) {
    timer.expires_after(std::chrono::microseconds(i % (max_delay + 1)));
    auto winner = co_await (store.async_get(key, asio::as_tuple(asio::use_awaitable)) ||
                            timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    if (winner.index() == 0 && std::get<0>(std::get<0>(winner))) ++result.unexpected;
    ++result.finished;
  }
}

/// Runs the race on a strand of `io` with four threads until it ends (`io` must have no other
/// work that keeps it running).
inline read_race_result run_read_race(boost::asio::io_context& io, storage& store,
                                      const std::string& key, int rounds, int max_delay) {
  read_race_result result;
  boost::asio::co_spawn(boost::asio::make_strand(io),
                        race_reads_against_timers(store, key, rounds, max_delay, result),
                        boost::asio::detached);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& thread : threads) thread.join();
  return result;  // Joined: every write to `result` happened before.
}

}  // namespace s3lect::test
