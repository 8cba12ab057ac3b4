// Elects itself on the in-memory storage and exits 0: proves headers, library and
// dependencies of the installed package work together.
#include <s3lect/s3lect.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>

namespace asio = boost::asio;

asio::awaitable<void> lead_once(s3lect::elector& elector, int& term) {
  auto lease = co_await elector.async_wait_for_leadership();
  term = static_cast<int>(lease.term);
  co_await elector.async_stop();
}

int main() {
  asio::io_context io;
  s3lect::memory_storage storage(io.get_executor(), std::make_shared<s3lect::memory_store>());
  s3lect::elector_config config;
  config.lock_key = "consumer/leader.json";
  config.server_id = "consumer";
  s3lect::elector elector(io.get_executor(), storage, config);
  elector.start();
  int term = 0;
  asio::co_spawn(io, lead_once(elector, term), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
  std::cout << "consumer led with term " << term << "\n";
  return term == 1 ? 0 : 1;
}
