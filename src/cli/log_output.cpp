#include "cli/log_output.hpp"

#include "cli/json_text.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace s3lect::cli {
namespace {

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// Length of the `key=` starting at `pos`, or 0 when no field starts there.
std::size_t field_start_length(std::string_view line, std::size_t pos) {
  std::size_t end = pos;
  while (end < line.size() && is_key_char(line[end])) ++end;
  if (end == pos || end >= line.size() || line[end] != '=') return 0;
  return end - pos + 1;
}

/// The position of the next field start after `from` (a space followed by `key=`), or npos.
std::size_t next_field(std::string_view line, std::size_t from) {
  for (std::size_t i = from; i < line.size(); ++i) {
    if (line[i] == ' ' && field_start_length(line, i + 1) != 0) return i + 1;
  }
  return std::string_view::npos;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

/// A quoted value starting at `start`: its text, and where the next field starts (npos at the
/// end of the line).
struct quoted_field {
  std::string text;
  std::size_t next = std::string_view::npos;
};

/// The JSON string literal at `start` when it ends at the end of the line or before the next
/// field; nullopt when there is none (the value is then read unquoted).
std::optional<quoted_field> quoted_value(std::string_view line, std::size_t start) {
  if (start >= line.size() || line[start] != '"') return std::nullopt;
  for (std::size_t i = start + 1; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
      continue;
    }
    if (line[i] != '"') continue;
    const std::size_t after = i + 1;
    const bool at_end = after == line.size();
    if (!at_end && (line[after] != ' ' || field_start_length(line, after + 1) == 0)) continue;
    auto text = log_text::unquote(line.substr(start + 1, i - start - 1));
    if (!text) return std::nullopt;
    return quoted_field{std::move(*text), at_end ? std::string_view::npos : after + 1};
  }
  return std::nullopt;
}

}  // namespace

std::optional<log_level> parse_log_level(std::string_view text) {
  if (text == "trace") return log_level::trace;
  if (text == "debug") return log_level::debug;
  if (text == "info") return log_level::info;
  if (text == "warning" || text == "warn") return log_level::warning;
  if (text == "error") return log_level::error;
  return std::nullopt;
}

std::optional<log_format> parse_log_format(std::string_view text) {
  if (text == "text") return log_format::text;
  if (text == "json") return log_format::json;
  return std::nullopt;
}

log_event split_log_line(std::string_view line) {
  log_event event;
  std::size_t pos = field_start_length(line, 0) != 0 ? 0 : next_field(line, 0);
  event.message = std::string(trim(line.substr(0, pos)));
  while (pos != std::string_view::npos) {
    const std::size_t key_length = field_start_length(line, pos);
    std::string key(line.substr(pos, key_length - 1));
    const std::size_t value_start = pos + key_length;
    if (auto quoted = quoted_value(line, value_start)) {
      event.fields.emplace_back(std::move(key), std::move(quoted->text));
      pos = quoted->next;
      continue;
    }
    const std::size_t next = next_field(line, value_start);
    const std::string_view value = trim(line.substr(
        value_start, next == std::string_view::npos ? std::string_view::npos : next - value_start));
    event.fields.emplace_back(std::move(key), std::string(value));
    event.fields.back().literal = log_text::is_literal(value);
    pos = next;
  }
  return event;
}

std::string format_log_line(log_format format, std::chrono::system_clock::time_point time,
                            log_level level, const log_event& event) {
  std::vector<const log_field*> fields;
  for (const auto& field : event.fields) {
    bool seen = field.key == "time" || field.key == "level" || field.key == "msg";
    for (const auto* earlier : fields) seen = seen || earlier->key == field.key;
    if (!seen) fields.push_back(&field);
  }
  if (format == log_format::json) {
    std::string line = "{\"time\":\"" + format_utc_ms(time) + "\",\"level\":\"" +
                       std::string(to_string(level)) + "\",\"msg\":" + json_quote(event.message);
    for (const auto* field : fields) log_text::append_json(line, *field);
    return line + "}";
  }
  std::string line = "time=" + format_utc_ms(time) + " level=" + std::string(to_string(level)) +
                     " msg=" + json_quote(event.message);
  for (const auto* field : fields) log_text::append_text(line, *field);
  return line;
}

log_output::log_output(log_format format, log_level level, std::vector<log_field> context)
    : format_(format), level_(level), context_(std::move(context)) {}

void log_output::log(log_level level, std::string_view message,
                     std::vector<log_field> fields) const {
  if (!enabled(level)) return;
  write(level, log_event{std::string(message), std::move(fields)});
}

logger log_output::library_logger() const {
  logger result;
  result.level = level_;
  // A copy of this output, so the logger stays valid whatever happens to `this`.
  result.sink = [output = *this](log_level level, std::string_view line) {
    output.write(level, split_log_line(line));
  };
  return result;
}

void log_output::write(log_level level, log_event event) const {
  for (const auto& field : context_) event.fields.push_back(field);
  std::string line = format_log_line(format_, std::chrono::system_clock::now(), level, event);
  line += '\n';
  // One write per line, so lines of concurrent writers (several s3lect processes on one
  // terminal) do not interleave; a failing stderr is not worth dying for.
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t written = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace s3lect::cli
