// Azure Storage's Shared Key authorisation: the string to sign of a Blob service request and
// its HMAC-SHA256 under the account key ("Authorize with Shared Key", Azure Storage REST
// reference). Pure functions, unit-tested without sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// Standard base64 (with padding) of `bytes`.
std::string base64_encode(std::string_view bytes);

/// The bytes of standard base64 `text`; nullopt when it is not base64 (or empty).
std::optional<std::string> base64_decode(std::string_view text);

/// What Shared Key signs of one request.
struct shared_key_request {
  std::string method;  ///< "GET", "PUT", "DELETE"
  /// The encoded URI path as sent, without the query: "/container/blob", or on an emulator
  /// "/devstoreaccount1/container/blob".
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;  ///< every header sent but these
  /// The query's parameters, decoded (`comp`, `blockid`): each becomes a line of the
  /// canonicalized resource.
  std::vector<std::pair<std::string, std::string>> query;
  /// The body's length; 0 is signed as an empty line (API versions since 2015-02-21).
  unsigned long long content_length = 0;
};

/// The string to sign: the verb, the standard headers' values in their fixed order, the
/// canonicalized `x-ms-` headers and the canonicalized resource: "/ACCOUNT" + path, then
/// "\nname:value" for each query parameter, names lower-cased and sorted.
std::string shared_key_string_to_sign(const shared_key_request& request, std::string_view account);

/// "SharedKey ACCOUNT:SIGNATURE", the signature being base64(HMAC-SHA256(key, string to sign))
/// under the decoded account key.
std::string shared_key_authorization(const shared_key_request& request, std::string_view account,
                                     std::string_view decoded_key);

}  // namespace s3lect::inline v1::detail
