// The advice preemption::advise gives (docs/coordination.md#preemption): the loop posts it per
// term, and elector::async_wait_for_handover_advice waits for it from any thread.
#pragma once

#include "waiter_list.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace s3lect::inline v1::detail {

class handover_advice {
 public:
  using handler = boost::asio::any_completion_handler<void(boost::system::error_code, std::string)>;

  explicit handover_advice(const completion_executors& executors);

  // ---- From the loop.

  /// Leadership `term` should go to `successor`: completes the waits for `term` with it.
  void advise(std::uint64_t term, std::string successor);
  /// Leadership `term` is over: its waits complete with errc::not_leader.
  void ended(std::uint64_t term);

  // ---- From any thread.

  /// Completes `h` with the advice for `term` (at once if given already), or errc::not_leader
  /// once that leadership is over.
  void wait(std::uint64_t term, handler h);
  /// Completes every wait with errc::stopped (the elector is being destroyed).
  void fail_all();

 private:
  std::mutex mutex_;
  std::optional<std::pair<std::uint64_t, std::string>> current_;
  std::uint64_t ended_through_ = 0;  // Every term up to this one is over.
  waiter_list<std::uint64_t, std::string> waiters_;
};

}  // namespace s3lect::inline v1::detail
