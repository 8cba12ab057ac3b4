#include "cli/json_text.hpp"

#include "base/log_text.hpp"

#include <cstdio>
#include <ctime>

namespace s3lect::cli {

std::string json_quote(std::string_view text) {
  return log_text::quote(text);
}

void json_object::key(std::string_view name) {
  if (text_.size() > 1) text_ += ',';
  text_ += json_quote(name);
  text_ += ':';
}

json_object& json_object::add_string(std::string_view name, std::string_view value) {
  key(name);
  text_ += json_quote(value);
  return *this;
}

json_object& json_object::add_number(std::string_view name, std::int64_t value) {
  key(name);
  text_ += std::to_string(value);
  return *this;
}

json_object& json_object::add_bool(std::string_view name, bool value) {
  key(name);
  text_ += value ? "true" : "false";
  return *this;
}

json_object& json_object::add_null(std::string_view name) {
  key(name);
  text_ += "null";
  return *this;
}

json_object& json_object::add_raw(std::string_view name, std::string_view json) {
  key(name);
  text_ += json;
  return *this;
}

std::string format_utc_ms(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto since_epoch = duration_cast<milliseconds>(t.time_since_epoch());
  auto seconds = floor<std::chrono::seconds>(since_epoch);
  const auto millis = (since_epoch - seconds).count();
  const std::time_t whole = static_cast<std::time_t>(seconds.count());
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(millis));
  return text;
}

}  // namespace s3lect::cli
