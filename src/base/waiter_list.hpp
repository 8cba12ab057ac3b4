// Any number of pending waits, each keyed, completed when the elector's state satisfies them
// or cancelled individually through their cancellation slots. Thread-safe.
#pragma once

#include <s3lect/error.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

namespace s3lect::inline v1::detail {

/// Where a waiter's completion goes. `hop` queues it (the elector's strand: an io_context-based
/// executor, so the post is never inline and completions leave in the order they were decided);
/// from there it runs on the handler's associated executor, or on `default_executor` (the
/// application's executor, elector::get_executor()) when it has none.
struct completion_executors {
  boost::asio::any_io_executor hop;
  boost::asio::any_io_executor default_executor;
};

/// Waiters with a key of type Key, completing with `void(error_code, Args...)`.
template <class Key, class... Args>
class waiter_list {
 public:
  using handler_type =
      boost::asio::any_completion_handler<void(boost::system::error_code, Args...)>;
  using result_type = std::tuple<boost::system::error_code, Args...>;

  /// Waiters are cancelled by the cancellation types in `accepted` (every type, by default);
  /// an emission of no accepted type leaves the waiter pending.
  explicit waiter_list(completion_executors executors, boost::asio::cancellation_type accepted =
                                                           boost::asio::cancellation_type::all)
      : state_(std::make_shared<state>(std::move(executors))), accepted_(accepted) {}

  /// Pending waiters complete with errc::stopped.
  ~waiter_list() {
    result_type stopped{};
    std::get<0>(stopped) = errc::stopped;
    complete_all(stopped);
  }

  waiter_list(const waiter_list&) = delete;
  waiter_list& operator=(const waiter_list&) = delete;

  /// Adds a waiter. Until it completes, the waiter is outstanding work on the executor it will
  /// complete on (Asio's rule for a pending operation: that executor's io_context::run() does
  /// not return meanwhile). Any cancellation type emitted on its slot completes it with
  /// operation_aborted (an accepted type: see the constructor); the slot must be emitted from
  /// the handler's executor (Asio's rule).
  void add(Key key, handler_type handler) {
    std::lock_guard lock(state_->mutex);
    const std::uint64_t id = ++state_->next_id;
    auto slot = handler.get_cancellation_slot();
    auto work = boost::asio::prefer(
        boost::asio::get_associated_executor(handler, state_->executors.default_executor),
        boost::asio::execution::outstanding_work.tracked);
    state_->entries.emplace_back(
        entry_type{id, std::move(key), std::move(work), std::move(handler)});
    if (slot.is_connected()) {
      slot.assign(cancel_handler{std::weak_ptr<state>(state_), id, accepted_});
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
    for (auto& entry : done) post_completion(state_->executors.hop, std::move(entry), *result++);
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
    boost::asio::any_completion_executor work;  // the completion's executor, work tracked
    handler_type handler;
  };

  struct state {
    explicit state(completion_executors ex) : executors(std::move(ex)) {}
    completion_executors executors;
    mutable std::mutex mutex;
    std::list<entry_type> entries;
    std::uint64_t next_id = 0;
  };

  // Never completes inline: the caller may hold locks, and completing inline could re-enter
  // the elector. The first hop goes through `hop_executor` (an io_context-based executor, so a
  // post is never inline); from there the handler runs on its own associated executor (or the
  // default one), where Asio requires cancellation to be emitted, so clearing the slot cannot
  // race an emission. The work stays tracked until the completion is queued there.
  static void post_completion(const boost::asio::any_io_executor& hop_executor, entry_type entry,
                              result_type result) {
    boost::asio::post(hop_executor,
                      hop{std::move(entry.work), std::move(entry.handler), std::move(result)});
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
    boost::asio::any_completion_executor work;
    handler_type handler;
    result_type result;
    void operator()() {
      boost::asio::dispatch(
          boost::asio::bind_executor(work, completion{std::move(handler), std::move(result)}));
    }
  };

  struct cancel_handler {
    std::weak_ptr<state> weak_state;
    std::uint64_t id;
    boost::asio::cancellation_type accepted;
    void operator()(boost::asio::cancellation_type_t type) const {
      if ((type & accepted) == boost::asio::cancellation_type::none) return;
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
        post_completion(locked->executors.hop, std::move(*found), std::move(aborted));
      }
    }
  };

  std::shared_ptr<state> state_;
  boost::asio::cancellation_type accepted_;
};

}  // namespace s3lect::inline v1::detail
