#include "guardian/guardian_log.hpp"

#include "guardian/log_text.hpp"

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

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

guardian_log::guardian_log(bool json, bool info_enabled, std::vector<log_field> context)
    : json_(json), info_enabled_(info_enabled), context_(std::move(context)) {}

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
           "\",\"msg\":\"" + escaped(message) + "\"";
    for (const auto& [key, value] : all) {
      line += ",\"" + escaped(key) + "\":";
      line += is_integer(value) ? value : "\"" + escaped(value) + "\"";
    }
    return line + "}";
  }
  line = "time=" + utc_time(unix_ms) + " level=" + std::string(level) + " msg=\"" +
         escaped(message) + "\"";
  for (const auto& [key, value] : all) {
    line += " " + key + "=" + (needs_quotes(value) ? "\"" + escaped(value) + "\"" : value);
  }
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
