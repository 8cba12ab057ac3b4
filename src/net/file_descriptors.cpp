#include <s3lect/file_descriptors.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <mutex>

namespace s3lect::inline v1 {

namespace {

std::uint64_t from_rlim(rlim_t value) {
  if (value == RLIM_INFINITY) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(value);
}

/// Raises the soft limit of `limit` toward `target` as far as the system accepts. macOS refuses
/// a soft limit above OPEN_MAX (kern.maxfilesperproc) even under an unlimited hard limit; then
/// the highest value it accepts is found by bisection. Returns the limit in force.
rlimit raise_soft_limit(const rlimit& limit, rlim_t target) {
  rlimit raised = limit;
  raised.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised;
  rlim_t accepted = limit.rlim_cur;  // in force, so accepted
  rlim_t refused = target;
  while (refused - accepted > 1) {
    raised.rlim_cur = accepted + (refused - accepted) / 2;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      accepted = raised.rlim_cur;
    } else {
      refused = raised.rlim_cur;
    }
  }
  raised.rlim_cur = accepted;
  if (accepted != limit.rlim_cur) ::setrlimit(RLIMIT_NOFILE, &raised);
  return raised;
}

}  // namespace

file_descriptor_limit ensure_file_descriptors(std::uint64_t needed) {
  // Two servers starting on two threads must not both read the old limit and one lower it.
  static std::mutex limit_mutex;
  const std::lock_guard lock(limit_mutex);
  file_descriptor_limit result;
  result.needed = needed;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    result.known = false;
    return result;
  }
  if (from_rlim(limit.rlim_cur) < needed) {
    const rlim_t target = limit.rlim_max == RLIM_INFINITY
                              ? static_cast<rlim_t>(needed)
                              : std::min(limit.rlim_max, static_cast<rlim_t>(needed));
    const rlimit raised = raise_soft_limit(limit, target);
    result.raised = raised.rlim_cur != limit.rlim_cur;
    limit = raised;
  }
  result.soft = from_rlim(limit.rlim_cur);
  result.hard = from_rlim(limit.rlim_max);
  return result;
}

}  // namespace s3lect::inline v1
