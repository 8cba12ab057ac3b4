// manual_clock: time that tests move by hand, and the timers that wait on it.
#include "manual_clock.hpp"

#include "clock_timer.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

namespace asio = boost::asio;

manual_clock::manual_clock(asio::execution_context& context)
    : asio::execution_context::service(context),
      now_(boot_clock::now()),
      boot_origin_(now_),
      wall_origin_(std::chrono::system_clock::now()) {}

manual_clock& manual_clock::install(asio::execution_context& context) {
  return asio::use_service<manual_clock>(context);
}

manual_clock* manual_clock::of(const asio::any_io_executor& executor) {
  asio::execution_context& context = asio::query(executor, asio::execution::context);
  return asio::has_service<manual_clock>(context) ? &asio::use_service<manual_clock>(context)
                                                  : nullptr;
}

boot_clock::time_point manual_clock::now() const {
  const std::lock_guard lock(mutex_);
  return now_;
}

std::chrono::system_clock::time_point manual_clock::wall_now() const {
  const std::lock_guard lock(mutex_);
  return wall_origin_ +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - boot_origin_);
}

void manual_clock::advance_to(boot_clock::time_point when) {
  struct firing {
    std::shared_ptr<manual_timer_state> timer;
    std::uint64_t generation;
    boot_clock::time_point expiry;
  };
  std::vector<firing> due_now;
  {
    const std::lock_guard lock(mutex_);
    now_ = std::max(now_, when);
    for (manual_timer_state* timer : timers_) {
      if (timer->expiry <= now_ && timer->fired_generation != timer->generation) {
        due_now.push_back({timer->shared_from_this(), timer->generation, timer->expiry});
      }
    }
  }
  // In expiry order, as Asio's timer queue runs timers that came due together (a paused process).
  std::stable_sort(due_now.begin(), due_now.end(),
                   [](const firing& a, const firing& b) { return a.expiry < b.expiry; });
  // Fired on the timer's executor: the parked timer is not thread-safe, and its owner (a strand)
  // may be setting it anew meanwhile; then the generation differs and the firing is void.
  for (auto& fire : due_now) {
    const asio::any_io_executor executor = fire.timer->parked.get_executor();
    asio::post(executor, [this, fire = std::move(fire)] {
      {
        const std::lock_guard lock(mutex_);
        if (fire.timer->generation != fire.generation) return;
        fire.timer->fired_generation = fire.generation;
      }
      fire.timer->parked.cancel();
    });
  }
}

void manual_clock::advance(boot_clock::duration by) {
  advance_to(now() + by);
}

std::optional<boot_clock::time_point> manual_clock::next_expiry() const {
  const std::lock_guard lock(mutex_);
  std::optional<boot_clock::time_point> next;
  for (const manual_timer_state* timer : timers_) {
    if (timer->expiry > now_ && timer->expiry != boot_clock::time_point::max()) {
      next = next ? std::min(*next, timer->expiry) : timer->expiry;
    }
  }
  return next;
}

void manual_clock::add(manual_timer_state* timer) {
  const std::lock_guard lock(mutex_);
  timers_.insert(timer);
}

void manual_clock::remove(manual_timer_state* timer) {
  const std::lock_guard lock(mutex_);
  timers_.erase(timer);
}

std::uint64_t manual_clock::set_expiry(manual_timer_state& timer, boot_clock::time_point expiry) {
  const std::lock_guard lock(mutex_);
  timer.expiry = expiry;
  return ++timer.generation;
}

bool manual_clock::due(const manual_timer_state& timer) const {
  const std::lock_guard lock(mutex_);
  return timer.expiry <= now_;
}

bool manual_clock::fired(const manual_timer_state& timer, std::uint64_t generation) const {
  const std::lock_guard lock(mutex_);
  return timer.fired_generation == generation;
}

manual_timer::manual_timer(const asio::any_io_executor& executor, manual_clock& clock)
    : clock_(&clock), state_(std::make_shared<manual_timer_state>(executor)) {
  clock_->add(state_.get());
}

manual_timer::~manual_timer() {
  clock_->remove(state_.get());
  cancel();
}

boot_clock::time_point manual_timer::expiry() const {
  return state_->expiry;
}

void manual_timer::expires_at(boot_clock::time_point expiry) {
  generation_ = clock_->set_expiry(*state_, expiry);
  state_->parked.cancel();
}

void manual_timer::expires_after(boot_clock::duration delay) {
  const boot_clock::time_point now = clock_->now();
  expires_at(delay >= boot_clock::time_point::max() - now ? boot_clock::time_point::max()
                                                          : now + delay);
}

void manual_timer::cancel() {
  expires_at(state_->expiry);
}

}  // namespace s3lect::inline v1::detail
