// boot_timer on a real CLOCK_BOOTTIME timerfd (or, in a build with S3LECT_PORTABLE_FALLBACKS, on
// the other systems' Asio timer on CLOCK_MONOTONIC): fires at (never before) its expiry, at once
// for a passed one, and again for a wait on an expired timer; cancel(), re-arming, per-operation
// cancellation and destruction abort waits with operation_aborted and leave the timer usable;
// the elector's pattern (a coroutine on a strand, woken by cancel()) works. A real suspend cannot
// be tested here: boot_timer.hpp says how to check it by hand.
#include "boot_timer.hpp"
#include "platform.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace s3lect::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

// Bound on every run: a wait that never completes fails the test instead of hanging it.
constexpr auto run_limit = 10s;

struct outcome {
  std::optional<error_code> ec;
  boot_clock::time_point at;
};

auto record(outcome& out) {
  return [&out](error_code ec) {
    out.ec = ec;
    out.at = boot_clock::now();
  };
}

std::ptrdiff_t open_fds() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                       std::filesystem::directory_iterator{});
}

TEST(BootClock, ReadsTheClockTheGuardianReads) {
  // s3lect and its guardian exchange deadlines on boot_clock_id: boot_clock must read it.
  const auto read = [] {
    timespec ts{};
    ::clock_gettime(boot_clock_id, &ts);
    return boot_clock::time_point(std::chrono::seconds(ts.tv_sec) +
                                  std::chrono::nanoseconds(ts.tv_nsec));
  };
  const auto before = read();
  const auto now = boot_clock::now();
  const auto after = read();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(BootTimer, FiresAtItsExpiryNotBefore) {
  asio::io_context ctx;
  boot_timer timer(ctx);
  timer.expires_after(50ms);
  const auto expiry = timer.expiry();
  outcome waited;
  timer.async_wait(record(waited));
  EXPECT_FALSE(waited.ec) << "completed inside async_wait";
  ctx.run_for(run_limit);
  ASSERT_TRUE(waited.ec);
  EXPECT_FALSE(*waited.ec) << waited.ec->message();
  EXPECT_GE(waited.at, expiry);
  EXPECT_LT(waited.at - expiry, 5s);
}

TEST(BootTimer, PassedExpiryFiresAtOnce) {
  asio::io_context ctx;
  boot_timer timer(ctx);
  // A new timer has expired, as Asio's do. The epoch (boot) and min() would disarm or be refused
  // by timerfd_settime if passed through as they are.
  const std::vector<std::optional<boot_timer::time_point>> expiries = {
      std::nullopt, boot_clock::now() - 1s, boot_timer::time_point{},
      boot_timer::time_point::min()};
  for (const auto& expiry : expiries) {
    SCOPED_TRACE(expiry ? expiry->time_since_epoch().count() : -1);
    if (expiry) timer.expires_at(*expiry);
    const auto started = boot_clock::now();
    outcome waited;
    timer.async_wait(record(waited));
    EXPECT_FALSE(waited.ec) << "completed inside async_wait";
    ctx.restart();
    ctx.run_for(run_limit);
    ASSERT_TRUE(waited.ec);
    EXPECT_FALSE(*waited.ec) << waited.ec->message();
    EXPECT_LT(waited.at - started, 2s);
  }
}

TEST(BootTimer, WaitOnAnExpiredTimerCompletesAgain) {
  // The fd fired and was read by the first wait: the second needs a fresh edge.
  asio::io_context ctx;
  boot_timer timer(ctx);
  timer.expires_after(20ms);
  outcome first;
  timer.async_wait(record(first));
  ctx.run_for(run_limit);
  ASSERT_TRUE(first.ec);
  EXPECT_FALSE(*first.ec);

  const auto started = boot_clock::now();
  outcome second;
  timer.async_wait(record(second));
  ctx.restart();
  ctx.run_for(run_limit);
  ASSERT_TRUE(second.ec);
  EXPECT_FALSE(*second.ec);
  EXPECT_LT(second.at - started, 2s);
}

TEST(BootTimer, CancelAbortsPendingWaitsAndLaterWaitsWaitNormally) {
  asio::io_context ctx;
  boot_timer timer(ctx);
  timer.expires_after(1h);
  outcome first, second;
  timer.async_wait(record(first));
  timer.async_wait(record(second));
  ctx.run_for(20ms);
  EXPECT_FALSE(first.ec);
  timer.cancel();
  ctx.restart();
  ctx.run_for(run_limit);
  ASSERT_TRUE(first.ec);
  ASSERT_TRUE(second.ec);
  EXPECT_EQ(*first.ec, asio::error::operation_aborted);
  EXPECT_EQ(*second.ec, asio::error::operation_aborted);

  timer.cancel();  // Nothing pending: no effect on what follows.
  timer.expires_after(50ms);
  const auto expiry = timer.expiry();
  outcome later;
  timer.async_wait(record(later));
  ctx.restart();
  ctx.run_for(run_limit);
  ASSERT_TRUE(later.ec);
  EXPECT_FALSE(*later.ec) << later.ec->message();
  EXPECT_GE(later.at, expiry);
}

// Starts a wait on a due timer from a strand handler that then sleeps, so that the other
// thread's reactor sees the fd fire and queues the wake-up on the strand behind the handler, and
// then calls `end` (still inside the handler). Returns how the wait completed.
template <class End>
outcome end_wait_with_queued_wake_up(End end) {
  asio::io_context ctx;
  auto strand = asio::make_strand(ctx);
  auto timer = std::make_unique<boot_timer>(strand);
  outcome waited;
  asio::post(strand, [&] {
    timer->expires_at(boot_clock::now() - 1s);
    timer->async_wait(record(waited));
    // Not synchronisation: holds the strand while the real timerfd fires on the other thread.
    std::this_thread::sleep_for(200ms);
    end(timer);
  });
  std::thread other([&] { ctx.run_for(run_limit); });
  ctx.run_for(run_limit);
  other.join();
  return waited;
}

TEST(BootTimer, CancelAbortsAWaitWhoseWakeUpIsQueued) {
  // Stricter than basic_waitable_timer, which lets such a wait succeed: a wait pending when
  // cancel() runs always ends with operation_aborted.
  const outcome waited =
      end_wait_with_queued_wake_up([](std::unique_ptr<boot_timer>& timer) { timer->cancel(); });
  ASSERT_TRUE(waited.ec);
  EXPECT_EQ(*waited.ec, asio::error::operation_aborted);
}

TEST(BootTimer, DestructionAbortsAWaitWhoseWakeUpIsQueued) {
  // The wake-up runs after the timer and its fd are gone: it must neither read the fd (its number
  // may be reused by then) nor succeed.
  const outcome waited =
      end_wait_with_queued_wake_up([](std::unique_ptr<boot_timer>& timer) { timer.reset(); });
  ASSERT_TRUE(waited.ec);
  EXPECT_EQ(*waited.ec, asio::error::operation_aborted);
}

TEST(BootTimer, ReArmingAbortsThePendingWait) {
  // As basic_waitable_timer::expires_at does: the pending wait ends, a new one waits anew.
  asio::io_context ctx;
  boot_timer timer(ctx);
  timer.expires_after(1h);
  outcome first;
  timer.async_wait(record(first));
  ctx.run_for(20ms);
  timer.expires_after(100ms);
  const auto expiry = timer.expiry();
  outcome second;
  timer.async_wait(record(second));
  ctx.restart();
  ctx.run_for(run_limit);
  ASSERT_TRUE(first.ec);
  EXPECT_EQ(*first.ec, asio::error::operation_aborted);
  EXPECT_LT(first.at, expiry);
  ASSERT_TRUE(second.ec);
  EXPECT_FALSE(*second.ec) << second.ec->message();
  EXPECT_GE(second.at, expiry);
}

TEST(BootTimer, PerOperationCancellationEndsThatWaitOnly) {
  for (const auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                          asio::cancellation_type::total}) {
    SCOPED_TRACE(static_cast<int>(type));
    asio::io_context ctx;
    boot_timer timer(ctx);
    timer.expires_after(300ms);
    const auto expiry = timer.expiry();
    asio::cancellation_signal signal;
    outcome cancelled, other;
    timer.async_wait(asio::bind_cancellation_slot(signal.slot(), record(cancelled)));
    timer.async_wait(record(other));
    ctx.run_for(20ms);
    signal.emit(type);
    ctx.restart();
    ctx.run_for(run_limit);
    ASSERT_TRUE(cancelled.ec);
    EXPECT_EQ(*cancelled.ec, asio::error::operation_aborted);
    EXPECT_LT(cancelled.at, expiry);
    ASSERT_TRUE(other.ec);
    EXPECT_FALSE(*other.ec) << other.ec->message();
    EXPECT_GE(other.at, expiry);
  }
}

struct loop_step {
  error_code ec;
  boot_clock::time_point at;
  boot_clock::time_point expiry;
  bool on_strand = false;
};

// The elector's loop: wait with no deadline until cancel() wakes it, then wait for a deadline.
asio::awaitable<void> wait_twice(boot_timer& timer, asio::strand<asio::any_io_executor> strand,
                                 std::vector<loop_step>& steps) {
  timer.expires_at(boot_timer::time_point::max());
  for (int round = 0; round < 2; ++round) {
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    steps.push_back({ec, boot_clock::now(), timer.expiry(), strand.running_in_this_thread()});
    timer.expires_after(50ms);
  }
}

TEST(BootTimer, WorksFromACoroutineOnAStrand) {
  asio::io_context ctx;
  asio::strand<asio::any_io_executor> strand(ctx.get_executor());
  boot_timer timer(strand);
  std::vector<loop_step> steps;
  asio::co_spawn(strand, wait_twice(timer, strand, steps), [](std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
  });
  asio::steady_timer waker(strand, 50ms);
  waker.async_wait([&timer](error_code) { timer.cancel(); });
  ctx.run_for(run_limit);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].ec, asio::error::operation_aborted);
  EXPECT_EQ(steps[0].expiry, boot_timer::time_point::max());
  EXPECT_TRUE(steps[0].on_strand);
  EXPECT_FALSE(steps[1].ec) << steps[1].ec.message();
  EXPECT_GE(steps[1].at, steps[1].expiry);
  EXPECT_TRUE(steps[1].on_strand);
}

TEST(BootTimer, DestructionAbortsPendingWaitsAndClosesTheFd) {
  // A timerfd each; the other systems' timer holds no descriptor.
  const std::ptrdiff_t fds_per_timer = linux_facilities ? 1 : 0;
  asio::io_context ctx;
  { boot_timer warm_up(ctx); }  // The reactor's own descriptors exist from here on.
  const auto fds_before = open_fds();

  auto armed = std::make_unique<boot_timer>(ctx);
  armed->expires_after(1h);
  outcome pending;
  armed->async_wait(record(pending));
  ctx.run_for(20ms);
  // A due timer whose wait has not run at all yet.
  auto due = std::make_unique<boot_timer>(ctx);
  due->expires_at(boot_clock::now() - 1s);
  outcome queued;
  due->async_wait(record(queued));
  EXPECT_EQ(open_fds(), fds_before + 2 * fds_per_timer);

  armed.reset();
  due.reset();
  EXPECT_EQ(open_fds(), fds_before);
  ctx.restart();
  ctx.run_for(run_limit);
  ASSERT_TRUE(pending.ec);
  EXPECT_EQ(*pending.ec, asio::error::operation_aborted);
  ASSERT_TRUE(queued.ec);
  EXPECT_EQ(*queued.ec, asio::error::operation_aborted);
}

TEST(BootTimer, ExpiresAfterSaturates) {
  asio::io_context ctx;
  boot_timer timer(ctx);
  timer.expires_after(boot_timer::duration::max());
  EXPECT_EQ(timer.expiry(), boot_timer::time_point::max());
}

TEST(BootTimer, TimerfdFailureThrowsANamedError) {
  if (!linux_facilities) GTEST_SKIP() << "no timerfd in this build: the timer opens no descriptor";
  asio::io_context ctx;
  { boot_timer warm_up(ctx); }
  // A descriptor limit at the lowest free descriptor makes timerfd_create fail with EMFILE.
  const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  // UBSan checks a polymorphic object's vptr once per type and caches the answer, but that check
  // needs a pipe: build one system_error while descriptors are still free.
  {
    const boost::system::system_error warm_up_checks(
        error_code(EMFILE, boost::system::system_category()), "warm-up");
  }
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit lowered = saved;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  std::optional<boost::system::system_error> thrown;
  try {
    boot_timer timer(ctx);
  } catch (const boost::system::system_error& error) {
    thrown = error;
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->code(), error_code(EMFILE, boost::system::system_category()));
  EXPECT_NE(std::string(thrown->what()).find("timerfd_create(CLOCK_BOOTTIME)"), std::string::npos)
      << thrown->what();
}

}  // namespace
}  // namespace s3lect::detail
