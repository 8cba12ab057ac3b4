#include "s3lect/logger.hpp"

namespace s3lect::inline v1 {

std::string_view to_string(log_level level) noexcept {
  switch (level) {
    case log_level::trace:
      return "trace";
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warning:
      return "warning";
    case log_level::error:
      return "error";
  }
  return "unknown";
}

}  // namespace s3lect::inline v1
