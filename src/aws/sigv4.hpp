// AWS Signature Version 4 for request headers: pure string functions, no I/O.
//
// The S3 client fills a sigv4_request with exactly the headers it will send and wants signed,
// then calls authorization_header() and sends the result as "Authorization". Expected signed
// headers for S3:
//   host                  always (SigV4 requires it)
//   x-amz-date            always; same value as sigv4_scope::amz_date
//   x-amz-content-sha256  always; same value as payload_hash (Ceph RGW refuses requests without it)
//   x-amz-security-token  when the credentials carry a session token
//   if-match / if-none-match, content-type, content-md5, range  when sent
// Do not put hop-by-hop or proxy-rewritten headers (connection, transfer-encoding,
// user-agent, expect) or "authorization" itself into the request: every header given is signed.
#pragma once

#include "sha256.hpp"
#include "uri_encode.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// Raw 32-byte HMAC-SHA256 of `data` under `key`; throws std::runtime_error only if libcrypto
/// fails.
std::string hmac_sha256(std::string_view key, std::string_view data);

/// Encoded path of an S3 object, used verbatim both on the wire and as canonical URI:
/// "/bucket/key" (path style) or "/key" (virtual-hosted, empty `bucket`). Slashes in the key are
/// kept, everything else goes through uri_encode; S3 does no normalisation, so "a//b/../c" stays.
std::string s3_object_path(std::string_view bucket, std::string_view key);

/// What the signer needs to know about one HTTP request.
struct sigv4_request {
  std::string method;         ///< "GET", "PUT", ...
  std::string canonical_uri;  ///< already encoded path, e.g. s3_object_path(); empty means "/"
  /// Query parameters, NOT encoded: the signer encodes and sorts them. Empty value is "key=".
  std::vector<std::pair<std::string, std::string>> query;
  /// Headers exactly as sent (any name case, untrimmed values, repeats allowed). The signer
  /// lower-cases names, trims values and collapses inner whitespace, sorts by name, and joins
  /// repeated names with ',' in the order given.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_hash;  ///< sha256_hex(body), or "UNSIGNED-PAYLOAD"
};

/// Long-term or temporary access key pair (the session token travels as a header).
struct sigv4_key {
  std::string access_key_id;
  std::string secret_access_key;
};

/// When, where and for which service a signature is valid.
struct sigv4_scope {
  std::string amz_date;  ///< "20150830T123600Z", see format_amz_date()
  std::string region;    ///< "us-east-1"
  std::string service;   ///< "s3"
};

/// The canonical request (SigV4 task 1), lines joined with '\n' and no trailing newline.
std::string canonical_request(const sigv4_request& request);

/// The string to sign (SigV4 task 2) for an already built canonical request.
std::string string_to_sign(const sigv4_scope& scope, std::string_view canonical_request);

/// Lower-case hex signature of `string_to_sign` (SigV4 tasks 3 and 4).
std::string signature(const sigv4_key& key, const sigv4_scope& scope,
                      std::string_view string_to_sign);

/// The full Authorization header value:
/// "AWS4-HMAC-SHA256 Credential=<id>/<date>/<region>/<service>/aws4_request,
/// SignedHeaders=<names>, Signature=<hex>".
std::string authorization_header(const sigv4_key& key, const sigv4_scope& scope,
                                 const sigv4_request& request);

/// UTC time as the ISO 8601 basic form SigV4 uses, "YYYYMMDDTHHMMSSZ" (seconds truncated).
std::string format_amz_date(std::chrono::system_clock::time_point when);

}  // namespace s3lect::inline v1::detail
