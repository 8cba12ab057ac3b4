// Small text helpers of the s3lect tool: JSON string quoting, a flat JSON object writer and
// RFC 3339 timestamps, so that its output never depends on the library's internal JSON code.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace s3lect::cli {

/// `text` as a JSON string literal, quotes included. Control characters and invalid UTF-8
/// bytes are escaped (invalid bytes as \u00XX of their value), so the output is always valid.
std::string json_quote(std::string_view text);

/// Writes one flat JSON object, fields in the order they are added.
class json_object {
 public:
  json_object& add_string(std::string_view key, std::string_view value);
  json_object& add_number(std::string_view key, std::int64_t value);
  json_object& add_bool(std::string_view key, bool value);
  json_object& add_null(std::string_view key);
  /// Adds `json` unchanged: the caller guarantees it is a valid JSON value.
  json_object& add_raw(std::string_view key, std::string_view json);
  /// The object's text, without a trailing newline.
  std::string str() const { return text_ + "}"; }

 private:
  void key(std::string_view name);
  std::string text_ = "{";
};

/// `t` as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC, truncated to the millisecond).
std::string format_utc_ms(std::chrono::system_clock::time_point t);

}  // namespace s3lect::cli
