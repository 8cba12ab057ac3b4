// What a value looks like in a log line, for s3lect's lines (cli/log_output) and the guardian's
// (guardian_log) alike, so that both read the same.
#pragma once

#include <string_view>

namespace s3lect::guardian {

/// True when `value` must be quoted in a logfmt line.
inline bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (const unsigned char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

/// True when `value` is written as a JSON number: an integer of at most 15 digits, without
/// leading zeros.
inline bool is_integer(std::string_view value) {
  std::string_view digits = value;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 15) return false;
  if (digits.size() > 1 && digits.front() == '0') return false;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace s3lect::guardian
