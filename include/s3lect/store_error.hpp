// The exception the default completion token throws for a failed store operation: the error
// code, and what the store said (its error code, message and request id), which a plain
// boost::system::system_error would lose.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/response_info.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

namespace s3lect::inline v1 {

/// A failed store operation, as thrown by the default completion token (completion_token.hpp)
/// of every operation whose result carries a response_info: `code()` is the library's error
/// (compare with s3lect::errc, e.g. errc::no_such_bucket) and `info()` what the store answered.
/// `what()` names both: the store's error code and message, its HTTP status and request id,
/// then the library's message. Catch boost::system::system_error to handle it with every other
/// failure. Copyable, as every exception should be; thread-compatible.
class store_error : public boost::system::system_error {
 public:
  /// `code` with the answer `info` it came from.
  store_error(boost::system::error_code code, response_info info);

  /// What the store said: http_status 0 when no answer came (a timeout, a refused connection).
  const response_info& info() const noexcept { return info_; }

 private:
  response_info info_;
};

}  // namespace s3lect::inline v1
