// Any number of pending waits, each keyed, completed when the elector's state satisfies them
// or cancelled individually through their cancellation slots. Thread-safe.
#pragma once

#include <s3lect/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

namespace s3lect::inline v1::detail {

/// Waiters with a key of type Key, completing with `void(error_code, Args...)`.
template <class Key, class... Args>
class waiter_list {
 public:
  using handler_type =
      boost::asio::any_completion_handler<void(boost::system::error_code, Args...)>;
  using result_type = std::tuple<boost::system::error_code, Args...>;

  /// `fallback` runs completions of handlers that have no associated executor.
  explicit waiter_list(boost::asio::any_io_executor fallback)
      : state_(std::make_shared<state>(std::move(fallback))) {}

  /// Pending waiters complete with errc::stopped.
  ~waiter_list() {
    result_type stopped{};
    std::get<0>(stopped) = errc::stopped;
    complete_all(stopped);
  }

  waiter_list(const waiter_list&) = delete;
  waiter_list& operator=(const waiter_list&) = delete;

  /// Adds a waiter. Any cancellation type emitted on its slot completes it with
  /// operation_aborted; the slot must be emitted from the handler's executor (Asio's rule).
  void add(Key key, handler_type handler) {
    std::lock_guard lock(state_->mutex);
    const std::uint64_t id = ++state_->next_id;
    auto slot = handler.get_cancellation_slot();
    auto& entry = state_->entries.emplace_back(entry_type{id, std::move(key), std::move(handler)});
    (void)entry;
    if (slot.is_connected()) {
      slot.assign(cancel_handler{std::weak_ptr<state>(state_), id});
    }
  }

  /// Completes, with the result `decide` returns, every waiter for which it returns one.
  template <class Decide>
  void complete_if(Decide&& decide) {
    std::list<entry_type> done;
    std::list<result_type> results;
    {
      std::lock_guard lock(state_->mutex);
      for (auto it = state_->entries.begin(); it != state_->entries.end();) {
        std::optional<result_type> result = decide(std::as_const(it->key));
        if (result) {
          results.push_back(std::move(*result));
          auto next = std::next(it);
          done.splice(done.end(), state_->entries, it);
          it = next;
        } else {
          ++it;
        }
      }
    }
    auto result = results.begin();
    for (auto& entry : done) post_completion(state_->fallback, std::move(entry.handler), *result++);
  }

  /// Completes every waiter with `result`.
  void complete_all(const result_type& result) {
    complete_if([&](const Key&) { return std::optional<result_type>(result); });
  }

  /// Number of pending waiters.
  std::size_t size() const {
    std::lock_guard lock(state_->mutex);
    return state_->entries.size();
  }

 private:
  struct entry_type {
    std::uint64_t id;
    Key key;
    handler_type handler;
  };

  struct state {
    explicit state(boost::asio::any_io_executor ex) : fallback(std::move(ex)) {}
    boost::asio::any_io_executor fallback;
    mutable std::mutex mutex;
    std::list<entry_type> entries;
    std::uint64_t next_id = 0;
  };

  // Never completes inline: the caller may hold locks, and completing inline could re-enter
  // the elector. The first hop goes through `fallback` (an io_context-based executor, so a post
  // is never inline); from there the handler runs on its own associated executor, where Asio
  // requires cancellation to be emitted, so clearing the slot cannot race an emission.
  static void post_completion(const boost::asio::any_io_executor& fallback, handler_type handler,
                              result_type result) {
    boost::asio::post(fallback, hop{fallback, std::move(handler), std::move(result)});
  }

  struct completion {
    handler_type handler;
    result_type result;
    void operator()() {
      handler.get_cancellation_slot().clear();
      std::apply(
          [this](auto&&... args) { std::move(handler)(std::forward<decltype(args)>(args)...); },
          std::move(result));
    }
  };

  struct hop {
    boost::asio::any_io_executor fallback;
    handler_type handler;
    result_type result;
    void operator()() {
      auto executor = boost::asio::get_associated_executor(handler, fallback);
      boost::asio::dispatch(
          boost::asio::bind_executor(executor, completion{std::move(handler), std::move(result)}));
    }
  };

  struct cancel_handler {
    std::weak_ptr<state> weak_state;
    std::uint64_t id;
    void operator()(boost::asio::cancellation_type_t) const {
      auto locked = weak_state.lock();
      if (!locked) return;
      std::optional<entry_type> found;
      {
        std::lock_guard lock(locked->mutex);
        for (auto it = locked->entries.begin(); it != locked->entries.end(); ++it) {
          if (it->id == id) {
            found.emplace(std::move(*it));
            locked->entries.erase(it);
            break;
          }
        }
      }
      if (found) {
        result_type aborted{};
        std::get<0>(aborted) = boost::asio::error::operation_aborted;
        post_completion(locked->fallback, std::move(found->handler), std::move(aborted));
      }
    }
  };

  std::shared_ptr<state> state_;
};

}  // namespace s3lect::inline v1::detail
