// Label values in the Prometheus text format, shared by the elector and the server series.
#pragma once

#include <string>
#include <string_view>

namespace s3lect::inline v1 {

/// A label value between double quotes: backslash, double quote and line feed escaped.
inline void append_label_value(std::string& out, std::string_view value) {
  out += '"';
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace s3lect::inline v1
