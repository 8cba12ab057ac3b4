// The elector without coroutines: completion handlers on an io_context the application already
// runs. Every operation you can `co_await` also takes a callback; the callback runs on the
// elector's executor (here the io_context), never inside the call that started the operation.
//
// The program campaigns for a lock, runs a timer-driven task while it leads, logs every change
// of leadership, and after a few ticks stops, releasing the lock. It then checks what it saw
// and exits non-zero if anything went wrong (CTest runs it).
//
// The store is s3lect::memory_store, an in-process bucket with S3's conditional writes: the
// point here is the shape of the calls. With a real bucket, construct an s3lect::s3_client
// instead (see leader_worker.cpp); nothing else changes.
//
// usage: callback_style
#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

namespace {

/// The application: campaigns, ticks while leader, and stops after `ticks_wanted` ticks. Every
/// handler runs on the one thread that runs the io_context, so the members need no locking. (On
/// an io_context run by several threads, bind the handlers to a strand with asio::bind_executor.)
class leader_app {
 public:
  leader_app(asio::io_context& io, s3lect::storage& store, s3lect::elector_config config,
             int ticks_wanted)
      : elector_(io.get_executor(), store, std::move(config)),
        tick_timer_(io),
        ticks_wanted_(ticks_wanted) {}

  void start() {
    elector_.start();
    watch_changes(0);
    campaign();
  }

  // What happened, for the checks in main().
  int leaderships = 0;
  int ticks = 0;
  int changes = 0;
  bool loss_seen = false;
  bool stopped_cleanly = false;

 private:
  void campaign() {
    elector_.async_wait_for_leadership([this](error_code ec, s3lect::leadership_lease lease) {
      // errc::stopped: the elector stopped before we were elected.
      if (ec) return;
      ++leaderships;
      std::printf("leader term=%llu\n", static_cast<unsigned long long>(lease.term));
      // Arm the loss wait before starting the task: whatever ends the lease (demotion, a
      // resignation, our own stop) cancels the task at once.
      elector_.async_wait_for_loss(lease, [this, lease](error_code loss_ec) {
        tick_timer_.cancel();
        loss_seen = !loss_ec;
        std::printf("lost term=%llu\n", static_cast<unsigned long long>(lease.term));
        if (!stopping_) campaign();
      });
      schedule_tick(lease.term);
    });
  }

  /// The leader-only task: a tick every 300 ms, carrying the fencing term.
  void schedule_tick(std::uint64_t term) {
    tick_timer_.expires_after(300ms);
    tick_timer_.async_wait([this, term](error_code ec) {
      if (ec) return;  // cancelled: leadership ended
      ++ticks;
      std::printf("tick term=%llu n=%d\n", static_cast<unsigned long long>(term), ticks);
      if (ticks == ticks_wanted_) {
        stop();
      } else {
        schedule_tick(term);
      }
    });
  }

  /// Logs every change of leader, term or is_leader: pass the last version seen, re-arm.
  void watch_changes(std::uint64_t seen_version) {
    elector_.async_wait_for_change(
        seen_version, [this](error_code ec, s3lect::leadership_status status) {
          if (ec) return;  // errc::stopped once the elector has stopped
          ++changes;
          std::printf("change version=%llu running=%d leader=%s term=%llu is_leader=%d\n",
                      static_cast<unsigned long long>(status.version), status.running ? 1 : 0,
                      status.leader_id.c_str(), static_cast<unsigned long long>(status.term),
                      status.is_leader ? 1 : 0);
          watch_changes(status.version);
        });
  }

  /// Stops campaigning; as leader, the elector first writes a released record, so that
  /// another node takes over at once instead of after the lease.
  void stop() {
    stopping_ = true;
    elector_.async_stop([this](error_code ec) {
      stopped_cleanly = !ec;
      std::printf("stopped: %s\n", ec.message().c_str());
    });
  }

  s3lect::elector elector_;
  asio::steady_timer tick_timer_;
  int ticks_wanted_;
  bool stopping_ = false;
};

}  // namespace

int main() {
  asio::io_context io;
  auto bucket = std::make_shared<s3lect::memory_store>();
  s3lect::memory_storage store(io.get_executor(), bucket, 200ms);

  // A short lease so the run takes about a second: every interval, deadline and timeout follows
  // it in the default proportions (15 s / 10 s / 5 s / 30 s give 3 s / 2 s / 1 s / 6 s).
  s3lect::elector_config config = s3lect::elector_config::for_lease(3s);
  config.lock_key = "examples/callback-style";
  config.server_id = "callback-1";

  constexpr int ticks_wanted = 3;
  leader_app app(io, store, config, ticks_wanted);
  app.start();
  // Returns once the elector has stopped and nothing is left to do, or after 10 s at worst.
  io.run_for(10s);

  // The lock must have been handed back: a released record at the key.
  const auto object = bucket->peek(config.lock_key);
  const auto record = object ? s3lect::decode_record(object->body) : s3lect::record_decoding{};
  const bool released = record.record && record.record->released;

  const bool ok = app.leaderships == 1 && app.ticks == ticks_wanted && app.loss_seen &&
                  app.stopped_cleanly && app.changes >= 2 && released;
  std::printf(
      "%s: leaderships=%d ticks=%d loss_seen=%d stopped_cleanly=%d changes=%d "
      "released=%d\n",
      ok ? "ok" : "FAILED", app.leaderships, app.ticks, app.loss_seen ? 1 : 0,
      app.stopped_cleanly ? 1 : 0, app.changes, released ? 1 : 0);
  return ok ? 0 : 1;
}
