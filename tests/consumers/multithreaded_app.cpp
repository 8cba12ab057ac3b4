// An application whose io_context runs on four threads, as an Asio server's often does, using
// s3lect through its public headers only and every kind of completion token: the elector on a
// strand of the application's, waiters on other strands, asio::use_future from a plain thread,
// asio::deferred, per-operation cancellation through a cancellation slot, a wait bound to a
// second io_context, and the default token's s3lect::store_error. Built with
// BOOST_ASIO_NO_DEPRECATED (legacy_asio_app.cpp covers the other setting); CI runs it
// under TSan. Exits 0 after two electors hand leadership over once.
#include <s3lect/s3lect.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

using strand_type = asio::strand<asio::io_context::executor_type>;

int failures = 0;  // written by the main thread only, after every other thread is joined

void expect(bool condition, const char* what) {
  if (!condition) {
    std::cerr << "multithreaded consumer: FAILED: " << what << "\n";
    ++failures;
  }
}

s3lect::elector_config config_for(const char* id) {
  auto config = s3lect::elector_config::for_lease(1s);
  config.lock_key = "consumer/multithreaded.json";
  config.server_id = id;
  return config;
}

// What the handlers saw, read by the main thread through futures and joins only.
struct observations {
  std::atomic<bool> cancelled_wait_aborted{false};
  std::atomic<bool> deferred_ran_on_its_strand{false};
  std::atomic<std::uint64_t> deferred_term{0};
  std::atomic<bool> loss_seen_on_its_strand{false};
};

// A waiter on a strand of its own: waits for `first` to lose its leadership.
asio::awaitable<void> watch_loss(s3lect::elector& first, s3lect::leadership_lease lease,
                                 strand_type strand, observations& seen) {
  co_await first.async_wait_for_loss(lease);
  seen.loss_seen_on_its_strand = strand.running_in_this_thread();
}

// A GET with the default token from a store that refuses it: what the thrown store_error says.
asio::awaitable<std::string> refused_get(s3lect::storage& store) {
  try {
    co_await store.async_get("consumer/missing-bucket");
  } catch (const s3lect::store_error& e) {
    co_return e.code() == s3lect::errc::no_such_bucket ? e.info().error_code : "wrong code";
  } catch (const std::exception& e) {
    co_return std::string("not a store_error: ") + e.what();
  }
  co_return "no exception";
}

}  // namespace

int main() {
  asio::io_context io(4);
  auto work = asio::make_work_guard(io);
  auto store = std::make_shared<s3lect::memory_store>();
  s3lect::memory_storage storage(io.get_executor(), store);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&io] { io.run(); });

  // The first elector runs on a strand the application made; the second on the bare
  // io_context executor (it wraps that in a strand of its own).
  strand_type app_strand = asio::make_strand(io);
  auto first = std::make_unique<s3lect::elector>(app_strand, storage, config_for("first"));
  auto second = std::make_unique<s3lect::elector>(io.get_executor(), storage, config_for("second"));
  observations seen;

  // asio::use_future from this plain thread.
  first->start();
  const s3lect::leadership_lease first_lease =
      first->async_wait_for_leadership(asio::use_future).get();
  expect(first_lease.term == 1, "the first elector leads with term 1");

  // A waiter for the first elector's loss, on a strand of its own.
  strand_type loss_strand = asio::make_strand(io);
  auto loss_watch = asio::co_spawn(loss_strand, watch_loss(*first, first_lease, loss_strand, seen),
                                   asio::use_future);

  // Per-operation cancellation: a wait cancelled through its slot completes with
  // operation_aborted and leaves the elector campaigning.
  second->start();
  asio::cancellation_signal cancel;
  strand_type cancel_strand = asio::make_strand(io);
  std::promise<void> cancelled;
  second->async_wait_for_leadership(asio::bind_cancellation_slot(
      cancel.slot(), asio::bind_executor(cancel_strand, [&](boost::system::error_code error,
                                                            s3lect::leadership_lease) {
        seen.cancelled_wait_aborted = error == asio::error::operation_aborted;
        cancelled.set_value();
      })));
  // The signal is emitted on the strand the handler runs on: a slot is not thread-safe.
  asio::post(cancel_strand, [&] { cancel.emit(asio::cancellation_type::terminal); });
  cancelled.get_future().get();
  expect(seen.cancelled_wait_aborted, "a cancelled wait completes with operation_aborted");

  // asio::deferred: the operation is made now and launched later, its handler bound to a strand.
  strand_type deferred_strand = asio::make_strand(io);
  auto deferred_wait = second->async_wait_for_leadership(asio::deferred);
  std::promise<void> deferred_done;
  std::move(deferred_wait)(asio::bind_executor(
      deferred_strand, [&](boost::system::error_code error, s3lect::leadership_lease lease) {
        seen.deferred_ran_on_its_strand = !error && deferred_strand.running_in_this_thread();
        seen.deferred_term = lease.term;
        deferred_done.set_value();
      }));

  // A wait bound to an io_context of its own, run by a thread that does nothing else: the
  // pending wait is work there (Asio's rule), so that run() returns only after its handler ran.
  asio::io_context other;
  std::atomic<bool> other_handler_ran{false};
  std::atomic<bool> other_returned_after_handler{false};
  first->async_wait_for_loss(
      first_lease,
      asio::bind_executor(other, [&](boost::system::error_code) { other_handler_ran = true; }));
  std::thread other_thread([&] {
    other.run();
    other_returned_after_handler = other_handler_ran.load();
  });

  // The handover: the first elector stops (releasing the lock); the second takes over.
  first->async_stop(asio::use_future).get();
  loss_watch.get();
  other_thread.join();
  expect(other_returned_after_handler,
         "a wait bound to a second io_context kept its run() going until its handler ran");
  deferred_done.get_future().get();
  expect(seen.loss_seen_on_its_strand, "the loss waiter resumed on its own strand");
  expect(seen.deferred_ran_on_its_strand, "the deferred wait completed on its bound strand");
  expect(seen.deferred_term == 2, "the second elector leads with term 2");
  expect(!first->is_leader() && second->is_leader(), "exactly one leader after the handover");

  // The default token's exception keeps what the store said: its S3 error code.
  s3lect::memory_storage refusing(io.get_executor(), store);
  s3lect::memory_faults faults;
  faults.fail_next = 1;
  faults.fail_with = s3lect::errc::no_such_bucket;
  refusing.set_faults(faults);
  const std::string refused = asio::co_spawn(io, refused_get(refusing), asio::use_future).get();
  expect(refused == "NoSuchBucket", "a refused GET throws s3lect::store_error naming NoSuchBucket");

  second->async_stop(asio::use_future).get();
  first.reset();
  second.reset();
  work.reset();
  for (auto& thread : threads) thread.join();
  if (failures == 0) std::cout << "multithreaded consumer passed\n";
  return failures == 0 ? 0 : 1;
}
