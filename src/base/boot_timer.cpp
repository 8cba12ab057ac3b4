// boot_timer: on Linux a CLOCK_BOOTTIME timerfd watched by the reactor through a
// stream_descriptor; elsewhere an Asio timer on boot_clock (platform.hpp).
#include "boot_timer.hpp"

#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

#if S3LECT_LINUX_FACILITIES
#include <boost/asio/posix/stream_descriptor.hpp>

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#else
#include <boost/asio/basic_waitable_timer.hpp>
#endif

#include <algorithm>

namespace s3lect::inline v1::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

#if S3LECT_LINUX_FACILITIES

/// Arms `fd` to expire at the boot_clock time `expiry`; time_point::max() disarms it.
///
/// Armed with the time left, not with TFD_TIMER_ABSTIME: a relative CLOCK_BOOTTIME timer counts
/// a suspend just the same, and it means the same thing to any process. libfaketime (which the
/// chaos harness and users' own clock tests preload to put a wall clock off) shifts *absolute*
/// timer deadlines by its offset on every clock, even when it leaves the clock itself alone:
/// armed absolute, this timer fired 5 minutes late, or at once over and over, under it.
error_code arm(int fd, boot_clock::time_point expiry) {
  itimerspec setting{};  // All zero: disarmed.
  if (expiry != boot_clock::time_point::max()) {
    // An it_value of zero would disarm: a time already passed (min() too, without computing
    // an overflowing difference) is due at once, so 1 ns.
    const boot_clock::time_point now = boot_clock::now();
    const std::int64_t ns =
        expiry <= now ? 1
                      : std::chrono::duration_cast<std::chrono::nanoseconds>(expiry - now).count();
    setting.it_value.tv_sec = ns / 1'000'000'000;
    setting.it_value.tv_nsec = ns % 1'000'000'000;
  }
  if (::timerfd_settime(fd, 0, &setting, nullptr) != 0) {
    return error_code(errno, boost::system::system_category());
  }
  return {};
}

/// What waits sleep on: a timerfd of the timer's own on CLOCK_BOOTTIME, which fires on resume
/// when the expiry passed during a suspend.
class boot_sleeper {
 public:
  explicit boot_sleeper(asio::any_io_executor executor) : descriptor_(std::move(executor)) {
    const int fd = ::timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) {
      throw boost::system::system_error(error_code(errno, boost::system::system_category()),
                                        "boot_timer: timerfd_create(CLOCK_BOOTTIME)");
    }
    error_code ec;
    descriptor_.assign(fd, ec);
    if (ec) {
      ::close(fd);  // Not owned by the descriptor when assign fails.
      throw boost::system::system_error(ec, "boot_timer: registering the timerfd with the reactor");
    }
  }

  asio::any_io_executor get_executor() { return descriptor_.get_executor(); }

  error_code arm(boot_clock::time_point expiry) {
    return detail::arm(descriptor_.native_handle(), expiry);
  }

  /// Clears the fd's readiness. The count itself is of no use: whether the expiry is reached
  /// is the clock's to say. Fails with EAGAIN when a re-arm, or another wait, cleared it first.
  void consume_expirations() {
    std::uint64_t expirations = 0;
    [[maybe_unused]] const ssize_t ignored =
        ::read(descriptor_.native_handle(), &expirations, sizeof expirations);
  }

  /// Sets the fd to `expiry` again: a passed expiry fires anew at once. The reactor watches the
  /// fd edge-triggered, so an expiry that fired while no wait was queued must fire again.
  void rearm(boot_clock::time_point expiry) { (void)arm(expiry); }

  template <class Handler>
  void async_wait(Handler&& handler) {
    descriptor_.async_wait(asio::posix::descriptor_base::wait_read, std::forward<Handler>(handler));
  }

  void cancel() {
    error_code ignored;
    descriptor_.cancel(ignored);
  }

  void close() {
    error_code ignored;
    descriptor_.close(ignored);
  }

 private:
  asio::posix::stream_descriptor descriptor_;
};

#else

/// What waits sleep on without timerfd: an Asio timer on boot_clock, which sleeps on the
/// reactor's clock. Where that stops during a suspend, a wait ends late by up to the time that
/// was left when the machine went to sleep (docs/operations.md, Other systems).
class boot_sleeper {
 public:
  explicit boot_sleeper(asio::any_io_executor executor) : timer_(std::move(executor)) {}

  asio::any_io_executor get_executor() { return timer_.get_executor(); }

  error_code arm(boot_clock::time_point expiry) {
    timer_.expires_at(expiry);
    return {};
  }

  /// Nothing to clear: the Asio timer holds no readiness.
  void consume_expirations() {}

  /// Nothing to do: the Asio timer completes a wait on a passed expiry by itself.
  void rearm(boot_clock::time_point) {}

  template <class Handler>
  void async_wait(Handler&& handler) {
    timer_.async_wait(std::forward<Handler>(handler));
  }

  void cancel() { timer_.cancel(); }

  void close() { timer_.cancel(); }

 private:
  asio::basic_waitable_timer<boot_clock> timer_;
};

#endif

}  // namespace

struct boot_timer_state {
  explicit boot_timer_state(asio::any_io_executor executor) : sleeper(std::move(executor)) {}

  bool due() const { return boot_clock::now() >= expiry; }

  /// Sets the sleeper to the expiry again. Cannot fail: only waits call it, while the timer is
  /// alive, and arm() keeps the setting valid.
  void rearm() { sleeper.rearm(expiry); }

  /// Aborts every wait started before: they see a generation other than their own.
  void abort_waits() {
    ++generation;
    sleeper.cancel();  // Wakes the waits still in the reactor.
  }

  boot_sleeper sleeper;
  boot_clock::time_point expiry{};
  std::uint64_t generation = 0;
};

namespace {

/// One async_wait: waits for the fd to be readable until the clock reaches the expiry.
struct wait_op {
  std::shared_ptr<boot_timer_state> state;
  std::uint64_t generation;
  bool started = false;

  template <class Self>
  void operator()(Self& self, error_code ec = {}) {
    if (!started) {
      started = true;
      self.reset_cancellation_state(asio::enable_total_cancellation());
      return wait(self);
    }
    // Checked first: after the destructor the fd is closed and must not be read.
    if (state->generation != generation) return self.complete(asio::error::operation_aborted);
    if (ec) return self.complete(ec);
    if (self.cancelled() != asio::cancellation_type::none) {
      return self.complete(asio::error::operation_aborted);
    }
    state->sleeper.consume_expirations();
    if (state->due()) return self.complete(error_code{});
    // Woken before the expiry (the kernel fires on this same clock, so not expected): set the
    // fd again, as this wake-up may have spent its firing, and wait on.
    state->rearm();
    wait(self);
  }

  template <class Self>
  void wait(Self& self) {
    // `self` owns this object: keep the state through the move. Nothing else runs on the timer
    // before we return (one strand), so reading it after the move is safe.
    const std::shared_ptr<boot_timer_state> timer = state;
    timer->sleeper.async_wait(std::move(self));
    // A timerfd is watched edge-triggered and a wait only queues itself: an expiry that fired
    // before the wait was queued (with no wait pending, or seen by another thread's reactor in
    // between) has spent its edge. Firing again gives the queued wait one; a wait on a due
    // timer thus also completes through the reactor, never inside async_wait.
    if (timer->due()) timer->rearm();
  }
};

}  // namespace

boot_timer::boot_timer(executor_type executor)
    : state_(std::make_shared<boot_timer_state>(std::move(executor))) {}

boot_timer::~boot_timer() {
  state_->abort_waits();
  state_->sleeper.close();
}

boot_timer::executor_type boot_timer::get_executor() const noexcept {
  return state_->sleeper.get_executor();
}

boot_timer::time_point boot_timer::expiry() const noexcept {
  return state_->expiry;
}

void boot_timer::expires_at(time_point expiry_time) {
  state_->abort_waits();
  if (const error_code ec = state_->sleeper.arm(expiry_time)) {
    throw boost::system::system_error(ec, "boot_timer: timerfd_settime");
  }
  state_->expiry = expiry_time;
}

void boot_timer::expires_after(duration delay) {
  // now is after boot (>= 0), so only the sum's upper end can overflow.
  const time_point now = boot_clock::now();
  expires_at(delay >= time_point::max() - now ? time_point::max() : now + delay);
}

void boot_timer::cancel() {
  state_->abort_waits();
}

void boot_timer::wait_impl(asio::any_completion_handler<wait_signature> handler) {
  asio::async_compose<asio::any_completion_handler<wait_signature>, wait_signature>(
      wait_op{state_, state_->generation}, handler, state_->sleeper.get_executor());
}

}  // namespace s3lect::inline v1::detail
