// Two nodes elect a leader over s3lect::memory_store, an in-process bucket with S3's conditional
// writes: the whole program runs with no store and no network (docs/getting-started.md shows it
// whole). node-a leads, node-b follows; node-a stops, which hands over at once, and node-b leads
// with the next term, the fencing token a protected resource compares.
#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

s3lect::elector_config node(std::string id) {
  // A 3 s lease: every interval, deadline and timeout follows it in the default proportions.
  s3lect::elector_config config = s3lect::elector_config::for_lease(3s);
  config.lock_key = "examples/handover";
  config.server_id = std::move(id);
  return config;
}

asio::awaitable<void> handover(s3lect::elector& a, s3lect::elector& b, std::uint64_t& terms) {
  a.start();
  const auto first = co_await a.async_wait_for_leadership();
  std::cout << "node-a leads, term " << first.term << std::endl;
  b.start();
  co_await a.async_stop();  // writes a released record: node-b need not wait for the lease
  const auto second = co_await b.async_wait_for_leadership();
  std::cout << "node-b leads, term " << second.term << std::endl;
  co_await b.async_stop();
  terms = second.term > first.term ? second.term : 0;
}

int main() {
  asio::io_context io;
  auto bucket = std::make_shared<s3lect::memory_store>();  // both nodes' bucket
  s3lect::memory_storage store_a(io.get_executor(), bucket, 1s);
  s3lect::memory_storage store_b(io.get_executor(), bucket, 1s);
  s3lect::elector a(io.get_executor(), store_a, node("node-a"));
  s3lect::elector b(io.get_executor(), store_b, node("node-b"));

  std::uint64_t last_term = 0;
  std::exception_ptr failure;
  asio::co_spawn(io, handover(a, b, last_term), [&](std::exception_ptr e) { failure = e; });
  io.run_for(20s);  // returns when both have stopped, or at worst after 20 s
  if (failure) std::rethrow_exception(failure);
  if (last_term == 0) {
    std::cout << "FAILED: no handover to a higher term" << std::endl;
    return 1;
  }
  std::cout << "handover ok" << std::endl;
  return 0;
}
