// Reading the lock record for the s3lect tool: one GET under the retry policy, the record
// decoded, and store failures described in one line.
#pragma once

#include <s3lect/record.hpp>
#include <s3lect/retry.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <optional>
#include <string>

namespace s3lect::cli {

/// What a read of the lock key found.
struct lock_read {
  boost::system::error_code error;  ///< Set when the store could not be read.
  response_info info;               ///< The store's answer to the last attempt.
  std::optional<object> found;      ///< The object, when one exists.
  /// The decoded record or why it is malformed; meaningful only when `found`.
  record_decoding decoded;
};

/// Reads `key` under `policy` (transient failures retried) and decodes what it finds.
/// Never throws for a store error.
boost::asio::awaitable<lock_read> read_lock(storage& store, std::string key, retry_policy policy);

/// One line describing a failed store request: "connection failed: Connection refused",
/// "access denied (HTTP 403 AccessDenied)".
std::string describe_store_error(const boost::system::error_code& error, const response_info& info);

}  // namespace s3lect::cli
