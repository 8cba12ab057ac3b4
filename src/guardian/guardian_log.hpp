// The guardian's few log lines, in the format and with the context fields of s3lect's own
// (cli/log_output), on the stderr it shares with s3lect.
#pragma once

#include "base/log_text.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::guardian {

/// A `key=value` field, written as s3lect's own (base/log_text.hpp).
using log_field = log_text::field;

/// Writes lines as `time=… level=warning msg="…" key=value …`, or as JSON objects.
class guardian_log {
 public:
  /// `json`: JSON lines; `info_enabled`: false drops info lines; `context`: fields added
  /// to every line (s3lect's lock and id).
  guardian_log(bool json, bool info_enabled,
               const std::vector<std::pair<std::string, std::string>>& context);

  void info(std::string_view message, std::vector<log_field> fields = {}) const;
  void warning(std::string_view message, std::vector<log_field> fields = {}) const;
  void error(std::string_view message, std::vector<log_field> fields = {}) const;

  /// One line, without its newline (for tests).
  std::string format(std::string_view level, std::string_view message,
                     const std::vector<log_field>& fields, long long unix_ms) const;

 private:
  void write(std::string_view level, std::string_view message, std::vector<log_field> fields) const;

  bool json_;
  bool info_enabled_;
  std::vector<log_field> context_;
};

}  // namespace s3lect::guardian
