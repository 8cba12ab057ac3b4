#include "handover_advice.hpp"

#include <s3lect/error.hpp>

#include <algorithm>

namespace s3lect::inline v1::detail {

using boost::system::error_code;
using result = std::optional<std::tuple<error_code, std::string>>;

handover_advice::handover_advice(const completion_executors& executors) : waiters_(executors) {}

void handover_advice::advise(std::uint64_t term, std::string successor) {
  std::lock_guard lock(mutex_);
  current_ = {term, successor};
  waiters_.complete_if([term, &successor](std::uint64_t waited) {
    return waited == term ? result({error_code{}, successor}) : std::nullopt;
  });
}

void handover_advice::ended(std::uint64_t term) {
  std::lock_guard lock(mutex_);
  ended_through_ = std::max(ended_through_, term);
  if (current_ && current_->first <= term) current_.reset();
  waiters_.complete_if([term](std::uint64_t waited) {
    return waited <= term ? result({make_error_code(errc::not_leader), std::string{}})
                          : std::nullopt;
  });
}

void handover_advice::wait(std::uint64_t term, handler h) {
  std::lock_guard lock(mutex_);
  waiters_.add(term, std::move(h));
  result now;
  if (term <= ended_through_) {
    now = result({make_error_code(errc::not_leader), std::string{}});
  } else if (current_ && current_->first == term) {
    now = result({error_code{}, current_->second});
  }
  if (now)
    waiters_.complete_if(
        [term, &now](std::uint64_t waited) { return waited == term ? now : std::nullopt; });
}

void handover_advice::fail_all() {
  waiters_.complete_all({make_error_code(errc::stopped), std::string{}});
}

}  // namespace s3lect::inline v1::detail
