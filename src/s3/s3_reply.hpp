// Interpreting a complete S3 reply: which s3lect::errc an HTTP status and S3 error code mean for
// a given operation, and the Date header. Pure functions, unit-tested without sockets.
#pragma once

#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The S3 operations the client performs; their replies are read differently.
enum class s3_operation { get, put_if_absent, put_if_match, remove };

/// The meaning of one complete reply.
struct reply_verdict {
  boost::system::error_code error;  ///< empty on success
  bool object_missing = false;      ///< GET or DELETE found no object: success, nothing there
};

/// Maps a complete reply (status and the `<Code>` of its XML error body, possibly empty) to the
/// outcome of `operation` (the table and its reasons are in s3_reply.cpp).
reply_verdict classify_reply(s3_operation operation, unsigned status, std::string_view s3_code);

/// Parses an RFC 9110 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the only form HTTP/1.1
/// servers may send; nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text);

}  // namespace s3lect::inline v1::detail
