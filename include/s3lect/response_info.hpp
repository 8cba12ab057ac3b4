// What a store said about one request: its HTTP status, its own error code and message, its
// request id and its clock. Carried by every storage result and by s3lect::store_error.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace s3lect::inline v1 {

/// What the store said about one request, useful in logs and diagnostics even on failure.
struct response_info {
  unsigned http_status = 0;  ///< 0 when no HTTP answer was received.
  std::string error_code;    ///< S3 error code from the XML error body, e.g. "PreconditionFailed".
  std::string message;       ///< S3 error message, or a description of a local failure.
  std::string request_id;    ///< S3 request id, when the store sent one.
  /// The `Date` header: when the store answered, on the store's clock, to the second.
  std::optional<std::chrono::system_clock::time_point> server_date;
  std::chrono::microseconds round_trip{0};  ///< Time from sending to the complete answer.
};

}  // namespace s3lect::inline v1
