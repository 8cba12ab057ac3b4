// Interpreting a complete Blob service reply: which s3lect::errc an HTTP status and Azure error
// code (`x-ms-error-code`, or the `<Code>` of the XML body) mean for an operation. The table
// and its reasons are in azure_reply.cpp.
#pragma once

#include <s3lect/response_info.hpp>

#include "http_client.hpp"
#include "s3_reply.hpp"

#include <boost/system/error_code.hpp>

#include <string_view>

namespace s3lect::inline v1::detail {

/// Maps a complete reply to the outcome of `operation`.
reply_verdict classify_blob_reply(s3_operation operation, unsigned status,
                                  std::string_view azure_code);

/// Fills `info` from an exchange (the request id, the error code and the first line of the
/// server's message) and returns the operation's error; `missing` is set for a GET or DELETE
/// that found no blob. A 4xx without an Azure error code or request id is some other server's
/// answer: never "no blob".
boost::system::error_code interpret_blob_reply(s3_operation kind, exchange_result& exchanged,
                                               const request_control& control, response_info& info,
                                               bool& missing);

}  // namespace s3lect::inline v1::detail
