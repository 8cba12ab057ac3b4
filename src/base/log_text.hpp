// How a value is written into a log line or a message, for the library's lines, s3lect's own
// (cli/log_output) and the job guardian's (guardian_log) alike, so that all of them read the
// same and a hostile value (a newline, a quote, "-1", "true") can neither cut a line nor change
// a field's type. Header-only and standard-library-only: the guardian links nothing else.
#pragma once

#include <concepts>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::log_text {

/// True when `value` reads as a JSON literal: an integer of at most 15 digits without leading
/// zeros, or true/false.
inline bool is_literal(std::string_view value) {
  if (value == "true" || value == "false") return true;
  std::string_view digits = value;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 15) return false;
  if (digits.size() > 1 && digits.front() == '0') return false;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

/// True when a text value must be quoted: it is bare only when it is printable ASCII without a
/// space, `"`, `=` or `\`, and does not read as a number or true/false.
inline bool needs_quotes(std::string_view value) {
  if (value.empty() || is_literal(value)) return true;
  for (const unsigned char c : value) {
    if (c <= ' ' || c >= 0x7f || c == '"' || c == '=' || c == '\\') return true;
  }
  return false;
}

/// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid.
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t extra = 0;
  unsigned low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    extra = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    extra = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    extra = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - i <= extra) return 0;
  for (std::size_t k = 1; k <= extra; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) return 0;
  }
  return extra + 1;
}

/// `text` as a JSON string literal, quotes included. Control characters and invalid UTF-8
/// bytes are escaped (invalid bytes as \u00XX of their value), so the output is always valid
/// JSON and always one line.
inline std::string quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = c >= 0x80 ? utf8_sequence_length(text, i) : 1;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || length == 0) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    ++i;
  }
  out += '"';
  return out;
}

/// The inverse of quote() for the text between the quotes: nullopt when an escape is not one
/// JSON knows. \u00XX above 0x7f gives the byte XX back, as quote() wrote it.
inline std::optional<std::string> unquote(std::string_view inner) {
  std::string out;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] != '\\') {
      out += inner[i];
      continue;
    }
    if (++i == inner.size()) return std::nullopt;
    switch (inner[i]) {
      case '"':
      case '\\':
      case '/':
        out += inner[i];
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        if (inner.size() - i <= 4) return std::nullopt;
        unsigned code = 0;
        for (const char h : inner.substr(i + 1, 4)) {
          const int digit = h >= '0' && h <= '9'   ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                   : -1;
          if (digit < 0) return std::nullopt;
          code = code * 16 + static_cast<unsigned>(digit);
        }
        if (code > 0xff) return std::nullopt;  // quote() never writes one
        out += static_cast<char>(code);
        i += 4;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

/// A text value as a log line or message shows it: bare when needs_quotes() says it may be,
/// else quote()d.
inline std::string value(std::string_view text) {
  return needs_quotes(text) ? quote(text) : std::string(text);
}

/// One `key=value` field of a line. A text value is a string in every format; a literal (made
/// from a number or a bool) is written bare.
struct field {
  std::string key;
  std::string value;
  bool literal = false;

  field(std::string name, std::string text) : key(std::move(name)), value(std::move(text)) {}
  field(std::string name, const char* text) : key(std::move(name)), value(text) {}
  template <std::integral Number>
  requires(!std::same_as<Number, bool>) field(std::string name, Number number)
      : key(std::move(name)), value(std::to_string(number)), literal(true) {}
  template <std::same_as<bool> Flag>
  field(std::string name, Flag flag)
      : key(std::move(name)), value(flag ? "true" : "false"), literal(true) {}

  friend bool operator==(const field&, const field&) = default;
};

/// Appends ` key=value` (text formats) to `line`.
inline void append_text(std::string& line, const field& f) {
  line += ' ';
  line += f.key;
  line += '=';
  line += f.literal ? f.value : value(f.value);
}

/// Appends `,"key":value` (JSON) to `line`, which holds an open object with at least one member.
inline void append_json(std::string& line, const field& f) {
  line += ',';
  line += quote(f.key);
  line += ':';
  line += f.literal ? f.value : quote(f.value);
}

}  // namespace s3lect::inline v1::log_text
