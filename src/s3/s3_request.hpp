// One S3 request as s3_client sends it: the signed HTTP request for an operation, and what its
// reply means (the operation's error and response_info).
#pragma once

#include <s3lect/credentials.hpp>
#include <s3lect/storage.hpp>

#include "http_client.hpp"
#include "s3_endpoint.hpp"
#include "s3_reply.hpp"

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Whether `kind` is a conditional PUT.
bool is_put(s3_operation kind);

/// The HTTP method of `kind`.
std::string_view method_of(s3_operation kind);

/// Why a request cannot be sent as asked, or an empty string. `condition` is null but for a PUT.
std::string argument_problem(std::string_view key, const put_condition* condition);

/// What goes into one request besides its method and key.
struct s3_request_parts {
  std::string body;
  /// Set: the body continues with this file's first `body_file_size` bytes, and the payload is
  /// signed as UNSIGNED-PAYLOAD (hashing it would read the file twice).
  std::string body_file;
  std::uint64_t body_file_size = 0;
  const put_condition* condition = nullptr;   ///< PUT only
  const object_metadata* metadata = nullptr;  ///< PUT with user metadata only
  std::string read_if_match;                  ///< GET: only this version (If-Match)
  std::string range;                          ///< GET: a Range header value
};

/// The request for `key` signed with `creds` for `region`.
http_request build_s3_request(const request_addressing& addressing, const std::string& region,
                              const aws_credentials& creds, s3_operation kind, std::string_view key,
                              s3_request_parts parts);

/// The error of an exchange that brought no complete reply, its detail in `info`: the transport's
/// error, or outcome_unknown for a PUT whose bytes may have reached the store.
boost::system::error_code transport_failure(s3_operation kind, const exchange_result& exchanged,
                                            const request_control& control, response_info& info);

/// Fills `info` from an exchange and returns the operation's error; `missing` is set for a GET
/// or DELETE that found no object.
boost::system::error_code interpret_reply(s3_operation kind, exchange_result& exchanged,
                                          const request_control& control, response_info& info,
                                          bool& missing);

}  // namespace s3lect::inline v1::detail
