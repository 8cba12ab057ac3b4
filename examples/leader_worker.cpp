// A leader-only worker: it campaigns for a lock and does its work only while leader, handing
// the work the fencing term and stopping it the moment leadership is lost.
//
//   for (;;) {
//     auto lease = co_await elector.async_wait_for_leadership();
//     co_await (work(lease.term) || elector.async_wait_for_loss(lease));
//   }
//
// The store comes from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...); with
// az://CONTAINER in place of the bucket it is Azure Blob Storage, through azure_blob_client,
// from AZURE_STORAGE_CONNECTION_STRING (or AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY).
// usage: leader_worker BUCKET|az://CONTAINER KEY ID [CA_FILE] [--lease-ms N] [--beats N]
// --beats N: finish after N beats of leader work, stepping down gracefully (used by CTest).
// It prints one line per event, `<unix ms> <id> <event> ...`, which scripts/demo.sh reads.
// SIGTERM or SIGINT stops it gracefully: a leader releases the lock so a follower takes over
// at once.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
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

/// The leader's work: here, a heartbeat each second that carries the fencing term. Returns
/// after `beats` beats (0: never).
asio::awaitable<void> work(std::string id, std::uint64_t term, int beats) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (int beat = 1; beats == 0 || beat <= beats; ++beat) {
    timer.expires_after(1s);
    co_await timer.async_wait(asio::use_awaitable);
    print_event(id, "working term=" + std::to_string(term) + " beat=" + std::to_string(beat));
  }
}

asio::awaitable<void> lead_when_elected(s3lect::elector& elector, std::string id, int beats) {
  for (;;) {
    auto lease = co_await elector.async_wait_for_leadership();
    print_event(id, "leader term=" + std::to_string(lease.term));
    auto ended = co_await (work(id, lease.term, beats) || elector.async_wait_for_loss(lease));
    if (ended.index() == 0) {
      print_event(id, "done term=" + std::to_string(lease.term));
      co_await elector.async_stop();
      print_event(id, "stopped");
      co_return;
    }
    print_event(id, "lost term=" + std::to_string(lease.term));
  }
}

/// Runs the election to its end. A store that will not serve this node (a wrong secret key, a
/// missing bucket, a wrong region) ends it with the refusal, which no retry would change: the
/// program says what the store answered and exits 1.
asio::awaitable<void> run_election(s3lect::elector& elector, std::string id, asio::io_context& io,
                                   int& exit_status) {
  auto [ec] = co_await elector.async_run(asio::as_tuple(asio::use_awaitable));
  if (!ec) co_return;  // stopped: the coroutines that stopped it end the program
  print_event(id, "refused error=" + elector.status().last_error);  // with the store's words
  exit_status = 1;
  io.stop();
}

asio::awaitable<void> stop_on_signal(s3lect::elector& elector, std::string id) {
  asio::signal_set signals(co_await asio::this_coro::executor, SIGINT, SIGTERM);
  co_await signals.async_wait(asio::use_awaitable);
  print_event(id, "stopping");
  co_await elector.async_stop();
  print_event(id, "stopped");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: leader_worker BUCKET|az://CONTAINER KEY ID [CA_FILE] [--lease-ms N]\n";
    return 2;
  }
  s3lect::s3_config store_config;
  store_config.bucket = argv[1];
  store_config.addressing = s3lect::addressing_style::path;
  s3lect::elector_config config;
  config.lock_key = argv[2];
  config.server_id = argv[3];
  int beats = 0;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--beats") == 0 && i + 1 < argc) {
      beats = std::stoi(argv[++i]);
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
  // The elector runs on any s3lect::storage: S3, or Azure Blob Storage.
  std::unique_ptr<s3lect::storage> store;
  if (const std::string_view target = argv[1]; target.starts_with("az://")) {
    auto azure = s3lect::azure_blob_config::from_environment(std::string(target.substr(5)));
    azure.tls = store_config.tls;
    store = std::make_unique<s3lect::azure_blob_client>(io.get_executor(), std::move(azure));
  } else {
    store = std::make_unique<s3lect::s3_client>(io.get_executor(), store_config);
  }
  s3lect::elector elector(io.get_executor(), *store, config);
  int exit_status = 0;
  asio::co_spawn(io, run_election(elector, config.server_id, io, exit_status), asio::detached);
  print_event(config.server_id, "started");
  asio::co_spawn(io, lead_when_elected(elector, config.server_id, beats),
                 [&io](std::exception_ptr) { io.stop(); });
  asio::co_spawn(io, stop_on_signal(elector, config.server_id),
                 [&io](std::exception_ptr) { io.stop(); });
  io.run();
  return exit_status;
}
