#include "guardian/guardian_log.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace s3lect::guardian {
namespace {

/// RFC 3339 UTC with milliseconds, as s3lect stamps its lines.
std::string utc_time(long long unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                unix_ms % 1000);
  return text;
}

}  // namespace

guardian_log::guardian_log(bool json, bool info_enabled,
                           const std::vector<std::pair<std::string, std::string>>& context)
    : json_(json), info_enabled_(info_enabled) {
  // s3lect hands its context fields (lock, id) over as text, and they stay text.
  for (const auto& [key, value] : context) context_.emplace_back(key, value);
}

void guardian_log::info(std::string_view message, std::vector<log_field> fields) const {
  if (info_enabled_) write("info", message, std::move(fields));
}

void guardian_log::warning(std::string_view message, std::vector<log_field> fields) const {
  write("warning", message, std::move(fields));
}

void guardian_log::error(std::string_view message, std::vector<log_field> fields) const {
  write("error", message, std::move(fields));
}

std::string guardian_log::format(std::string_view level, std::string_view message,
                                 const std::vector<log_field>& fields, long long unix_ms) const {
  std::vector<log_field> all = fields;
  all.insert(all.end(), context_.begin(), context_.end());
  std::string line;
  if (json_) {
    line = "{\"time\":\"" + utc_time(unix_ms) + "\",\"level\":\"" + std::string(level) +
           "\",\"msg\":" + log_text::quote(message);
    for (const auto& field : all) log_text::append_json(line, field);
    return line + "}";
  }
  line = "time=" + utc_time(unix_ms) + " level=" + std::string(level) +
         " msg=" + log_text::quote(message);
  for (const auto& field : all) log_text::append_text(line, field);
  return line;
}

void guardian_log::write(std::string_view level, std::string_view message,
                         std::vector<log_field> fields) const {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const long long unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  const std::string line = format(level, message, fields, unix_ms) + "\n";
  // One write per line, as s3lect's own lines, so that lines of the two processes never mix.
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace s3lect::guardian
