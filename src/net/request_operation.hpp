// The life of one client request as its caller sees it, shared by the S3 client and the peer
// client: the caller's handler, completed exactly once whichever of answer, deadline,
// cancellation and close comes first, and the request_control that stops the I/O at that point.
#pragma once

#include "http_client.hpp"

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

namespace s3lect::inline v1::detail {

/// Base of a running request that completes `void(error_code, Result)`. Everything but the
/// constructor and watch_cancellation() runs on strand().
///
/// Why not co_spawn(..., bind_cancellation_slot(caller's slot, ...)) and a timer raced with
/// operator||: a resolve in progress ignores per-operation cancellation (getaddrinfo runs on a
/// helper thread), and `||` waits for the cancelled branch to finish, so a slow DNS answer would
/// hold both the deadline and the caller's cancellation hostage. Instead the caller's slot and
/// the deadline both post to the strand, where on_deadline()/on_cancelled() abort the control
/// (closing the socket or cancelling the resolver) and complete the handler at once; the
/// coroutine notices finished() when its pending step returns and ends without touching the
/// handler.
template <class Result>
class request_operation : public std::enable_shared_from_this<request_operation<Result>> {
 public:
  using handler_type = boost::asio::any_completion_handler<void(boost::system::error_code, Result)>;
  using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

  request_operation(strand_type strand, const boost::asio::any_io_executor& fallback,
                    handler_type handler)
      : strand_(std::move(strand)),
        timer_(strand_),
        control_(std::make_shared<request_control>()),
        handler_work_(boost::asio::prefer(boost::asio::get_associated_executor(handler, fallback),
                                          boost::asio::execution::outstanding_work.tracked)),
        handler_(std::move(handler)) {}
  virtual ~request_operation() = default;
  request_operation(const request_operation&) = delete;
  request_operation& operator=(const request_operation&) = delete;

  const strand_type& strand() const noexcept { return strand_; }
  std::shared_ptr<request_control> control() const { return control_; }
  /// True once the handler was completed: the coroutine starts no further I/O.
  bool finished() const noexcept { return finished_; }

  /// Routes the caller's cancellation of a type in `accepted` to on_cancelled(); called in the
  /// initiating function, on the erased handler's slot, before anything can complete.
  void watch_cancellation(boost::asio::cancellation_type accepted) {
    auto slot = boost::asio::get_associated_cancellation_slot(*handler_);
    if (!slot.is_connected()) return;
    std::weak_ptr<request_operation> weak = this->shared_from_this();
    slot.assign([weak, strand = strand_, accepted](boost::asio::cancellation_type type) {
      if ((type & accepted) == boost::asio::cancellation_type::none) return;
      boost::asio::post(strand, [weak] {
        if (auto self = weak.lock(); self && !self->finished_) self->on_cancelled();
      });
    });
  }

  /// Starts the deadline covering the whole request: on_deadline() when it passes.
  void arm_deadline(std::chrono::milliseconds limit) {
    std::weak_ptr<request_operation> weak = this->shared_from_this();
    timer_.expires_after(limit);
    timer_.async_wait([weak](boost::system::error_code ec) {
      if (ec) return;
      if (auto self = weak.lock(); self && !self->finished_) self->on_deadline();
    });
  }

  /// Completes the handler with `ec` and `result` unless it already completed.
  void finish(boost::system::error_code ec, Result result) {
    if (finished_) return;
    finished_ = true;
    timer_.cancel();
    on_finish(ec, result);
    // Move-construct only: move-assigning any_completion_handler recurses in Boost 1.81.
    handler_type handler(std::move(*handler_));
    handler_.reset();
    boost::asio::any_completion_executor work(std::move(handler_work_));
    boost::asio::dispatch(work,
                          [handler = std::move(handler), ec, result = std::move(result)]() mutable {
                            // The slot is cleared where the caller emits into it, its handler's
                            // executor (Asio's rule): cleared from our strand, it raced a
                            // cancellation emitted there (TSan). An emission before this point
                            // reaches on_cancelled(), which sees the request finished.
                            handler.get_cancellation_slot().clear();
                            std::move(handler)(ec, std::move(result));
                          });
  }

  /// Completion of the request's coroutine: only an exception matters (the coroutine finished
  /// the request otherwise, or it was aborted).
  void on_coroutine_end(std::exception_ptr failure) {
    if (!failure || finished_) return;
    std::string what = "internal error";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    control_->abort();
    on_internal_error(std::move(what));
  }

  /// Milliseconds since construction with one decimal, for the debug line of a request.
  std::string elapsed_ms() const {
    const auto elapsed = std::chrono::steady_clock::now() - started_;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f",
                  std::chrono::duration<double, std::milli>(elapsed).count());
    return ms;
  }

 protected:
  /// The caller cancelled: abort control() and finish().
  virtual void on_cancelled() = 0;
  /// The deadline passed: abort control() and finish().
  virtual void on_deadline() = 0;
  /// The coroutine threw (control() is aborted already): finish().
  virtual void on_internal_error(std::string what) = 0;
  /// Called once, as the request finishes: counters and the debug line.
  virtual void on_finish(const boost::system::error_code& ec, const Result& result) = 0;

 private:
  strand_type strand_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<request_control> control_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  boost::asio::any_completion_executor handler_work_;  // before handler_: initialised from it
  std::optional<handler_type> handler_;
  bool finished_ = false;
};

}  // namespace s3lect::inline v1::detail
