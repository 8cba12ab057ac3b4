// Structured log lines of the s3lect tool on stderr: logfmt-style `key=value` text or JSON
// lines. The elector's own lines ("message key=value ...") are split into a message and
// fields, so that both kinds of line come out in one shape.
#pragma once

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

/// One `key=value` pair of a log line.
struct log_field {
  std::string key;
  std::string value;

  friend bool operator==(const log_field&, const log_field&) = default;
};

/// A log line split into its message and fields.
struct log_event {
  std::string message;
  std::vector<log_field> fields;
};

/// Splits an elector line `message key=value key="quoted value" …`. A field starts at a word
/// of letters, digits and `_` followed by `=`; an unquoted value runs to the next field, so
/// values with spaces (error texts) survive whole.
log_event split_log_line(std::string_view line);

/// Formats one line (without the newline). Fields with a key already given earlier are
/// dropped. In JSON, values that are integers or true/false are written as such.
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
