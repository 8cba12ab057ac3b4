// The elector's access to the caller's storage, which the caller may destroy as soon as the
// elector is gone while the loop and its operations still run until the shutdown reaches the
// strand. Every call into the storage holds a mutex, so clear() (from ~elector) returns only
// when no call is under way, and none starts after it: later requests complete with
// errc::stopped instead.
#pragma once

#include <s3lect/error.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <mutex>
#include <string>
#include <utility>

namespace s3lect::inline v1::detail {

class guarded_storage {
 public:
  /// `stopped_executor` runs the errc::stopped completions once the storage is gone.
  guarded_storage(storage& store, boost::asio::any_io_executor stopped_executor)
      : store_(&store), stopped_executor_(std::move(stopped_executor)) {}

  /// From here on no request reaches the storage.
  void clear() {
    std::lock_guard lock(mutex_);
    store_ = nullptr;
  }

  /// storage::async_get as an awaitable of (error_code, get_result).
  auto get(std::string key) {
    auto token = boost::asio::as_tuple(boost::asio::use_awaitable);
    return boost::asio::async_initiate<decltype(token), get_signature>(initiate_get{this}, token,
                                                                       std::move(key));
  }

  /// storage::async_put as an awaitable of (error_code, put_result).
  auto put(std::string key, std::string body, put_condition condition) {
    auto token = boost::asio::as_tuple(boost::asio::use_awaitable);
    return boost::asio::async_initiate<decltype(token), put_signature>(
        initiate_put{this}, token, std::move(key), std::move(body), std::move(condition));
  }

 private:
  // Named initiations, not lambdas: they end up inside co_await
  // (docs/architecture.md#gcc-12-coroutine-rules).
  struct initiate_get {
    guarded_storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key) const {
      std::lock_guard lock(self->mutex_);
      if (self->store_) {
        self->store_->async_get(std::move(key), std::forward<Handler>(handler));
      } else {
        self->complete_stopped(std::forward<Handler>(handler), get_result{});
      }
    }
  };
  struct initiate_put {
    guarded_storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, std::string body,
                    put_condition condition) const {
      std::lock_guard lock(self->mutex_);
      if (self->store_) {
        self->store_->async_put(std::move(key), std::move(body), std::move(condition),
                                std::forward<Handler>(handler));
      } else {
        self->complete_stopped(std::forward<Handler>(handler), put_result{});
      }
    }
  };

  template <class Handler, class Result>
  void complete_stopped(Handler&& handler, Result result) {
    boost::asio::post(stopped_executor_,
                      boost::asio::append(std::forward<Handler>(handler),
                                          boost::system::error_code(errc::stopped), result));
  }

  // Recursive: a storage completing inline resumes our coroutine inside the call, which could
  // start the next call.
  std::recursive_mutex mutex_;
  storage* store_;
  boost::asio::any_io_executor stopped_executor_;
};

}  // namespace s3lect::inline v1::detail
