#include <s3lect/file_descriptors.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <mutex>

namespace s3lect {

namespace {

std::uint64_t from_rlim(rlim_t value) {
  if (value == RLIM_INFINITY) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(value);
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
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY
                          ? static_cast<rlim_t>(needed)
                          : std::min(limit.rlim_max, static_cast<rlim_t>(needed));
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      result.raised = raised.rlim_cur != limit.rlim_cur;
      limit = raised;
    }
  }
  result.soft = from_rlim(limit.rlim_cur);
  result.hard = from_rlim(limit.rlim_max);
  return result;
}

}  // namespace s3lect
