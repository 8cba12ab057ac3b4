// Logging goes through a user-supplied function; s3lect is silent by default.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <functional>
#include <string_view>

namespace s3lect::inline v1 {

/// Severity of a log line.
enum class log_level { trace, debug, info, warning, error };

/// Returns "trace", "debug", "info", "warning" or "error".
std::string_view to_string(log_level level) noexcept;

/// A logging hook: lines below `level` and all lines while `sink` is empty are dropped.
/// Lines are `message key=value key=value`; the sink may be called from any thread the
/// io_context runs on, and must not block.
struct logger {
  log_level level = log_level::info;  ///< Lines below this level are dropped.
  /// Receives each line with its level; empty: nothing is logged.
  std::function<void(log_level, std::string_view line)> sink;

  /// True when a line at `at` would be written.
  bool enabled(log_level at) const noexcept { return sink && at >= level; }
  /// Writes `line` at `at` if enabled.
  void log(log_level at, std::string_view line) const {
    if (enabled(at)) sink(at, line);
  }
};

}  // namespace s3lect::inline v1
