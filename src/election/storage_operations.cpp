// The elector's storage operations: one read or conditional write of the lock record, each
// attempt bounded by request_timeout and retried by the policy (async_retry), reported to the
// loop as read_done / write_done. Also takes the store's clock from every answer's Date.
#include "elector_impl.hpp"
#include "write_retry.hpp"

#include <s3lect/error.hpp>
#include <s3lect/retry.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

namespace {

bool is_cancelled(const asio::cancellation_state& state) {
  return state.cancelled() != asio::cancellation_type::none;
}

/// A write is retried only when it certainly did not happen, and never once cancelled: a
/// cancelled write keeps its attempt's own error, since it may still have landed.
struct write_retry_predicate {
  asio::cancellation_state state;
  bool operator()(const error_code& ec) const {
    return !is_cancelled(state) && detail::write_retryable(ec);
  }
};

}  // namespace

void elector::impl::start_operation(detail::storage_request request) {
  auto self = shared_from_this();
  auto slot = loop.operation_cancel.slot();
  if (request.type == detail::storage_request::kind::read) {
    asio::co_spawn(strand, run_read(self), asio::bind_cancellation_slot(slot, asio::detached));
  } else if (request.type == detail::storage_request::kind::peer_check) {
    asio::co_spawn(strand, run_peer_check(self, std::move(request.peer)),
                   asio::bind_cancellation_slot(slot, asio::detached));
  } else {
    const bool releasing = publisher.release_pending();
    asio::co_spawn(
        strand, run_write(self, std::move(request.body), std::move(request.condition), releasing),
        asio::bind_cancellation_slot(slot, asio::detached));
  }
}

asio::awaitable<std::tuple<error_code, get_result>> elector::impl::read_attempt(
    std::shared_ptr<impl> self, std::string key, milliseconds timeout) {
  using namespace asio::experimental::awaitable_operators;
  detail::short_timer timer(self->strand, self->clock);
  timer.expires_after(timeout);
  const auto sent = self->clock.now();
  auto outcome = co_await (self->store.get(std::move(key)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (outcome.index() == 0) {
    const auto& [ec, result] = std::get<0>(outcome);
    self->note_store_date(sent, result.info.server_date);
    self->note_refused_clock(ec);
    self->publisher.count_get(ec, result.found.has_value());
    co_return std::get<0>(std::move(outcome));
  }
  self->publisher.count_get(errc::timeout, false);
  get_result timed_out;
  timed_out.info.message = "no answer within request_timeout";
  co_return std::tuple<error_code, get_result>{errc::timeout, std::move(timed_out)};
}

asio::awaitable<std::tuple<error_code, put_result>> elector::impl::write_attempt(
    std::shared_ptr<impl> self, std::string key, std::string body, put_condition condition,
    milliseconds timeout) {
  using namespace asio::experimental::awaitable_operators;
  detail::short_timer timer(self->strand, self->clock);
  timer.expires_after(timeout);
  const auto sent = self->clock.now();
  auto outcome = co_await (self->store.put(std::move(key), std::move(body), std::move(condition)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (outcome.index() == 0) {
    const auto& [ec, result] = std::get<0>(outcome);
    self->note_store_date(sent, result.info.server_date);
    self->note_refused_clock(ec);
    self->publisher.count_put(ec);
    co_return std::get<0>(std::move(outcome));
  }
  self->publisher.count_put(errc::outcome_unknown);
  // The write may have reached the store: only a re-read can tell.
  put_result timed_out;
  timed_out.info.message = "no answer within request_timeout";
  co_return std::tuple<error_code, put_result>{errc::outcome_unknown, std::move(timed_out)};
}

void elector::impl::note_store_date(
    detail::boot_clock::time_point sent,
    const std::optional<std::chrono::system_clock::time_point>& date) {
  if (!date) return;
  auto noted = store_clock.note_date(sent, *date, core.config().max_clock_skew);
  core.set_clock_probe(noted.probe);
  for (const auto& [level, line] : noted.lines) log(level, line);
}

/// The store refused a request as signed too far from its clock (S3 allows 15 minutes): name
/// the clock and the offset measured, since no request will succeed until the clock is fixed.
void elector::impl::note_refused_clock(const error_code& ec) const {
  if (ec != errc::clock_skewed) return;
  log(log_level::error,
      "the store refuses our requests: this system clock is too far from the store's "
      "(RequestTimeTooSkewed) " +
          store_clock.describe());
}

// The operations below must end by pushing their completion: the core waits for it before it
// does anything else. Asio's default throw_if_cancelled(true) would instead throw from the first
// co_await after a cancellation (one that arrived after a retry pause ended), and
// co_spawn(detached) swallows the exception: the elector would wait forever. So they turn it off
// and test the cancellation state themselves.
asio::awaitable<void> elector::impl::run_read(std::shared_ptr<impl> self) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const elector_config config = self->core.config();
  auto attempt = [self, key = config.lock_key, timeout = config.request_timeout] {
    return read_attempt(self, key, timeout);
  };
  auto [ec, result] = co_await detail::retry_on_elector_clock(config.retry, attempt);
  // A cancelled read is abandoned, whatever its last attempt said.
  if (ec && is_cancelled(co_await asio::this_coro::cancellation_state)) {
    ec = asio::error::operation_aborted;
  }
  if (!ec) self->upkeep_after_lock_read();
  self->push(detail::read_done{ec, std::move(result)});
}

asio::awaitable<void> elector::impl::run_write(std::shared_ptr<impl> self, std::string body,
                                               put_condition condition, bool releasing) {
  co_await asio::this_coro::throw_if_cancelled(false);
  if (releasing) {
    // The loss of a stop or resignation was reported before this release, but its waiters'
    // completions were only queued on the strand, which this coroutine holds. Once the released
    // record is written, a follower may lead at once: let those completions reach their
    // executors first, so that no waiter hears of its loss after the next leader could have
    // heard of its gain.
    co_await asio::post(self->strand, asio::use_awaitable);
  }
  const elector_config config = self->core.config();
  auto attempt = [self, key = config.lock_key, body = std::move(body),
                  condition = std::move(condition), timeout = config.request_timeout] {
    return write_attempt(self, key, body, condition, timeout);
  };
  const write_retry_predicate retryable{co_await asio::this_coro::cancellation_state};
  auto [ec, result] = co_await detail::retry_on_elector_clock(config.retry, attempt, retryable);
  self->push(detail::write_done{ec, std::move(result)});
}

}  // namespace s3lect::inline v1
