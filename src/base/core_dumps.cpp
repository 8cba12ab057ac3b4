#include "s3lect/core_dumps.hpp"

#include <cerrno>

#if defined(__linux__)
#include <sys/prctl.h>
#else
#include <sys/resource.h>
#endif

namespace s3lect::inline v1 {

boost::system::error_code exclude_from_core_dumps() noexcept {
#if defined(__linux__)
  const int failed = ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#else
  const rlimit none{0, 0};
  const int failed = ::setrlimit(RLIMIT_CORE, &none);
#endif
  if (failed != 0) return {errno, boost::system::system_category()};
  return {};
}

}  // namespace s3lect::inline v1
