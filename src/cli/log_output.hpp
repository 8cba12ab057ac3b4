// Structured log lines of the s3lect tool on stderr: logfmt-style `key=value` text or JSON
// lines. The elector's own lines ("message key=value ...") are split into a message and
// fields, so that both kinds of line come out in one shape.
#pragma once

#include "base/log_text.hpp"

#include <s3lect/logger.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::cli {

/// How log lines are written.
enum class log_format {
  text,  ///< `time=… level=info msg="became leader" term=3 …`
  json,  ///< `{"time":"…","level":"info","msg":"became leader","term":3,…}`
};

/// Parses trace|debug|info|warning|error ("warn" too).
std::optional<log_level> parse_log_level(std::string_view text);
/// Parses text|json.
std::optional<log_format> parse_log_format(std::string_view text);

/// One `key=value` pair of a log line: made from a string, it is a string in every format
/// (`{"id","-1"}` gives `id="-1"` and `"id":"-1"`); made from a number or a bool, it is
/// written bare (`{"term", 3}` gives `term=3` and `"term":3`).
using log_field = log_text::field;

/// A log line split into its message and fields.
struct log_event {
  std::string message;
  std::vector<log_field> fields;
};

/// Splits an elector line `message key=value key="quoted value" …`. A field starts at a word
/// of letters, digits and `_` followed by `=`. A quoted value is a JSON string literal
/// (log_text::quote()) and a string; an unquoted one runs to the next field, so values with
/// spaces survive whole, and is a literal when it reads as a number or true/false.
log_event split_log_line(std::string_view line);

/// Formats one line (without the newline). Fields with a key already given earlier are
/// dropped. Every value is written by log_text, as the library and the guardian write theirs.
std::string format_log_line(log_format format, std::chrono::system_clock::time_point time,
                            log_level level, const log_event& event);

/// Writes log lines to stderr, one write(2) per line, adding `context` fields (e.g. lock and
/// id) to every line.
class log_output {
 public:
  log_output(log_format format, log_level level, std::vector<log_field> context);

  /// True when lines at `level` are written.
  bool enabled(log_level level) const noexcept { return level >= level_; }
  /// Writes one line if `level` is enabled.
  void log(log_level level, std::string_view message, std::vector<log_field> fields = {}) const;
  /// A logger for the library whose lines go through this output.
  logger library_logger() const;
  /// The format, and the fields added to every line: for the job guardian's own lines.
  log_format format() const noexcept { return format_; }
  const std::vector<log_field>& context() const noexcept { return context_; }

 private:
  void write(log_level level, log_event event) const;

  log_format format_;
  log_level level_;
  std::vector<log_field> context_;
};

}  // namespace s3lect::cli
