// An application written against Asio's deprecated API, as much production code still is
// (io_context::work, io_context::post, deadline_timer::expires_from_now), that links s3lect and
// elects itself on the in-memory storage. It compiles only if s3lect imposes no
// BOOST_ASIO_NO_DEPRECATED, and it exits 0 only if the application's handlers and s3lect's run
// together in one program (docs/integration.md, "Asio settings").
#include <s3lect/s3lect.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deadline_timer.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>
#include <memory>
#include <optional>

namespace asio = boost::asio;

#if defined(BOOST_ASIO_NO_DEPRECATED)
#error "this consumer must be built with Asio's deprecated API available"
#endif

namespace {

asio::awaitable<void> lead_once(s3lect::elector& elector, std::uint64_t& term) {
  auto lease = co_await elector.async_wait_for_leadership();
  term = lease.term;
  co_await elector.async_stop();
}

// Re-arms its timer every millisecond until a term is known: a plain handler object, as
// pre-coroutine Asio code has them.
struct legacy_tick {
  asio::deadline_timer& timer;
  const std::uint64_t& term;
  int& ticks;
  void operator()(boost::system::error_code error) const {
    if (error || term != 0) return;
    ++ticks;
    timer.expires_from_now(boost::posix_time::milliseconds(1));
    timer.async_wait(*this);
  }
};

}  // namespace

int main() {
  asio::io_context io;
  // Deprecated: keeps run() from returning until reset, the pre-executor_work_guard way.
  std::optional<asio::io_context::work> work(std::in_place, io);

  s3lect::memory_storage storage(io.get_executor(), std::make_shared<s3lect::memory_store>());
  s3lect::elector_config config;
  config.lock_key = "consumer/leader.json";
  config.server_id = "legacy-consumer";
  s3lect::elector elector(io.get_executor(), storage, config);
  elector.start();

  std::uint64_t term = 0;
  int ticks = 0;
  // Deprecated: a Boost.DateTime timer set with expires_from_now, its handler allocated through
  // Asio's legacy hooks (the application's own definitions of them, not s3lect's).
  asio::deadline_timer ticker(io);
  ticker.expires_from_now(boost::posix_time::milliseconds(1));
  ticker.async_wait(legacy_tick{ticker, term, ticks});

  asio::co_spawn(io, lead_once(elector, term), [&](std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
    // Deprecated: io_context::post.
    io.post([&] { work.reset(); });
  });
  io.run();
  std::cout << "legacy consumer led with term " << term << " (" << ticks << " ticks)\n";
  return term == 1 ? 0 : 1;
}
