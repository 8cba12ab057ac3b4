// The elector-group fixture of the unit tests: electors, each with its own memory_storage view
// (and faults) of one shared memory_store, on one io_context whose time is a manual clock
// (src/base/manual_clock.hpp). run_until() runs every ready handler, then moves the clock to
// the next timer's expiry: a lease of 600 ms passes in microseconds, and a loaded machine
// changes nothing but the wall time the test takes.
#pragma once

#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include "manual_clock.hpp"
#include "support/leadership_timeline.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::test {

/// The unit tests' short timing: a lease of 600 ms renewed every 150 ms (deadline 400 ms), an
/// infrequent read every 450 ms, requests bounded by 50 ms and retried after 5 and 20 ms.
inline void use_short_timing(elector_config& config) {
  using namespace std::chrono_literals;
  config.lease = 600ms;
  config.renew_deadline = 400ms;
  config.frequent_interval = 150ms;
  config.infrequent_interval = 450ms;
  config.request_timeout = 50ms;
  config.retry.delays = {5ms, 20ms};
}

/// How many of `electors` (null: destroyed) lead now.
inline int leader_count(const std::vector<std::unique_ptr<elector>>& electors) {
  int count = 0;
  for (const auto& e : electors) count += e && e->is_leader() ? 1 : 0;
  return count;
}

/// The index of the first of `electors` that leads now, or -1.
inline int leader_index(const std::vector<std::unique_ptr<elector>>& electors) {
  for (std::size_t i = 0; i < electors.size(); ++i) {
    if (electors[i] && electors[i]->is_leader()) return static_cast<int>(i);
  }
  return -1;
}

/// An io_context and the clock its electors read: a manual clock, or the real clocks for the
/// tests that need real time (real sockets whose timeouts are on the real clock).
struct elector_io {
  enum class time { manual, real };

  explicit elector_io(time kind = time::manual)
      : clock(kind == time::manual ? &detail::manual_clock::install(io) : nullptr) {}

  /// Runs the io_context until `done()` or `limit` has passed on the group's clock; returns
  /// done(). On the manual clock, time moves only when nothing is ready to run.
  bool run_until(const std::function<bool()>& done,
                 std::chrono::nanoseconds limit = std::chrono::seconds(10)) {
    io.restart();
    if (!clock) {
      const auto deadline = std::chrono::steady_clock::now() + limit;
      while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.run_one_for(std::chrono::milliseconds(5));
      }
      return done();
    }
    const auto deadline = clock->now() + limit;
    for (;;) {
      while (!done() && io.poll_one() > 0) {
      }
      if (done()) return true;
      const auto next = clock->next_expiry();
      if (!next || *next > deadline) break;
      clock->advance_to(*next);
      io.restart();
    }
    clock->advance_to(deadline);
    io.restart();
    while (!done() && io.poll_one() > 0) {
    }
    return done();
  }

  /// Runs for `duration` on the group's clock.
  void run_for(std::chrono::nanoseconds duration) {
    run_until([] { return false; }, duration);
  }

  /// The group's monotonic and wall clocks (the manual clock's, or the real ones).
  detail::boot_clock::time_point now() const { return detail::clock_source(clock).now(); }
  std::chrono::system_clock::time_point wall_now() const {
    return detail::clock_source(clock).wall_now();
  }

  boost::asio::io_context io;
  detail::manual_clock* clock;  // nullptr: real time.
};

/// A group of electors over one shared store; elector i is built from make_config(i).
struct elector_group : elector_io {
  elector_group(int size, const std::function<elector_config(int index)>& make_config,
                time kind = time::manual)
      : elector_io(kind) {
    for (int i = 0; i < size; ++i) {
      views.push_back(std::make_unique<memory_storage>(io.get_executor(), store));
      electors.push_back(
          std::make_unique<elector>(io.get_executor(), *views.back(), make_config(i)));
    }
  }

  /// Starts every elector, each watched by record_periods into `periods`.
  void start_all() {
    for (std::size_t i = 0; i < electors.size(); ++i) {
      electors[i]->start();
      boost::asio::co_spawn(observers, record_periods(*electors[i], static_cast<int>(i), periods),
                            boost::asio::detached);
    }
  }

  int leader_count() const { return test::leader_count(electors); }
  int leader_index() const { return test::leader_index(electors); }

  /// The record at `key`, decoded, if any.
  std::optional<lock_record> record(const std::string& key = "group/leader.json") const {
    auto found = store->peek(key);
    if (!found) return std::nullopt;
    return decode_record(found->body).record;
  }

  // The observers share `periods`: one strand, so that they never run at once when the io_context
  // runs on several threads (one's loss and the next one's leadership complete together).
  boost::asio::strand<boost::asio::io_context::executor_type> observers =
      boost::asio::make_strand(io);
  std::shared_ptr<memory_store> store = std::make_shared<memory_store>();
  std::vector<std::unique_ptr<memory_storage>> views;
  std::vector<std::unique_ptr<elector>> electors;
  std::vector<leadership_period> periods;
};

}  // namespace s3lect::test
