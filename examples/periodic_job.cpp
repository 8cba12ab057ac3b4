// A leader-only periodic job: every few seconds the leader "compacts" a data set, and only the
// leader; followers wait. The job gets the fencing term, to pass to every write it makes (see
// docs/safety-and-fencing.md), and it stops the moment leadership is lost, even mid-run:
//
//   auto lease = co_await elector.async_wait_for_leadership();
//   co_await (job_loop(lease.term) || elector.async_wait_for_loss(lease));
//
// SIGINT or SIGTERM stops the job first and then releases the lock, so that another node takes
// over at once and never overlaps with this one.
//
// The store comes from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
// usage: periodic_job BUCKET KEY ID [CA_FILE] [--lease-ms N] [--every-ms N]
// It prints one line per event, `<unix ms> <id> <event> ...` (examples/periodic_job_test.sh
// reads them). Exit status: 0 after a clean stop, 1 on an error.
#include <s3lect/elector.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <utility>

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

void print_event(const std::string& id, const std::string& event) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  std::printf("%lld %s %s\n", static_cast<long long>(now.count()), id.c_str(), event.c_str());
  std::fflush(stdout);
}

/// One run of the job: a compaction in three steps. Each step stands for a write that the
/// store should accept only from `term` or later. A cancellation (leadership lost) ends the
/// run at the step in progress.
asio::awaitable<void> compact(std::string id, std::uint64_t term, int run) {
  asio::steady_timer step(co_await asio::this_coro::executor);
  for (int segment = 1; segment <= 3; ++segment) {
    step.expires_after(100ms);
    co_await step.async_wait(asio::use_awaitable);
  }
  print_event(id, "compacted term=" + std::to_string(term) + " run=" + std::to_string(run));
}

/// Runs the job at once, then every `every` (at a fixed rate: a slow run does not push the
/// schedule back). Never returns; it ends by cancellation.
asio::awaitable<void> job_loop(std::string id, std::uint64_t term,
                               std::chrono::milliseconds every) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  auto next_run = std::chrono::steady_clock::now();
  for (int run = 1;; ++run) {
    co_await compact(id, term, run);
    next_run += every;
    timer.expires_at(next_run);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

/// Campaigns forever, running the job during each leadership.
asio::awaitable<void> lead_jobs(s3lect::elector& elector, std::string id,
                                std::chrono::milliseconds every) {
  for (;;) {
    auto lease = co_await elector.async_wait_for_leadership();
    print_event(id, "leader term=" + std::to_string(lease.term));
    co_await (job_loop(id, lease.term, every) || elector.async_wait_for_loss(lease));
    print_event(id, "lost term=" + std::to_string(lease.term));
  }
}

asio::awaitable<void> run(s3lect::elector& elector, asio::signal_set& signals, std::string id,
                          std::chrono::milliseconds every) {
  elector.start();
  print_event(id, "started");
  // The || cancels the losing side: on a signal, the job stops at its next await (or the wait
  // for leadership ends) before we go on to release the lock.
  co_await (lead_jobs(elector, id, every) || signals.async_wait(asio::use_awaitable));
  print_event(id, "stopping");
  co_await elector.async_stop();
  print_event(id, "stopped");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: periodic_job BUCKET KEY ID [CA_FILE] [--lease-ms N] [--every-ms N]\n";
    return 2;
  }
  s3lect::s3_config store_config;
  store_config.bucket = argv[1];
  store_config.addressing = s3lect::addressing_style::path;
  s3lect::elector_config config;
  config.lock_key = argv[2];
  config.server_id = argv[3];
  std::chrono::milliseconds every = 10s;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--every-ms") == 0 && i + 1 < argc) {
      every = std::chrono::milliseconds{std::stol(argv[++i])};
    } else if (std::strcmp(argv[i], "--lease-ms") == 0 && i + 1 < argc) {
      // Every interval, deadline, timeout and retry delay follows the lease, in the default
      // proportions (15 s : 10 s : 5 s : 30 s).
      auto scaled =
          s3lect::elector_config::for_lease(std::chrono::milliseconds{std::stol(argv[++i])});
      scaled.lock_key = std::move(config.lock_key);
      scaled.server_id = std::move(config.server_id);
      config = std::move(scaled);
    } else {
      store_config.tls.ca_file = argv[i];
    }
  }

  asio::io_context io;
  // Installed first, so that a signal arriving during start-up is not lost.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  s3lect::s3_client store(io.get_executor(), store_config);
  s3lect::elector elector(io.get_executor(), store, config);

  int exit_status = 0;
  asio::co_spawn(io, run(elector, signals, config.server_id, every),
                 [&exit_status](std::exception_ptr error) {
                   if (!error) return;
                   try {
                     std::rethrow_exception(error);
                   } catch (const std::exception& e) {
                     std::cerr << "periodic_job: " << e.what() << '\n';
                   }
                   exit_status = 1;
                 });
  io.run();
  return exit_status;
}
