// Reading the XML error body S3-compatible stores send with 4xx/5xx answers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The fields of `<Error>` the client acts on or logs; entities already unescaped.
struct s3_error_body {
  std::string code;        ///< "PreconditionFailed", "NoSuchKey", "SlowDown", ...
  std::string message;     ///< human-readable; may be empty (Ceph RGW sends none)
  std::string request_id;  ///< for support tickets and logs; may be empty
};

/// Bodies longer than this are not parsed: error documents are a few hundred bytes, and a
/// large body is some proxy's HTML page or an attack, not something to walk through.
inline constexpr std::size_t max_s3_error_body_size = 64 * 1024;

/// Parses `<Error><Code>...</Code><Message>...</Message><RequestId>...</RequestId>...</Error>`
/// after an optional prolog (other children ignored). Returns nullopt unless the root element is
/// Error with a complete, non-empty Code; a body cut off after </Code> still yields what was read.
/// Never throws on bad input (only bad_alloc).
std::optional<s3_error_body> parse_s3_error_xml(std::string_view body);

}  // namespace s3lect::inline v1::detail
