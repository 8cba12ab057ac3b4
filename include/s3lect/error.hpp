// Error codes of s3lect. A lost race (412) is an ordinary outcome, reported as an error_code so
// callers can branch on it without exceptions.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace s3lect::inline v1 {

/// Errors produced by s3lect. Compare with `ec == s3lect::errc::x`.
enum class errc {
  // Outcomes of conditional writes.
  precondition_failed = 1,  ///< 412, or 404 on If-Match: the object is not what we expected.
  conflict,                 ///< 409 ConditionalRequestConflict: outcome undecided, re-read.
  outcome_unknown,          ///< A conditional PUT may or may not have committed (5xx, timeout).

  // Answers of the store that no retry will change.
  access_denied,       ///< 403 AccessDenied (or another 403).
  signature_mismatch,  ///< 403 SignatureDoesNotMatch: wrong secret key.
  invalid_access_key,  ///< 403 InvalidAccessKeyId: unknown access key id.
  clock_skewed,        ///< 403 RequestTimeTooSkewed: our clock differs too much from the store's.
  bad_request,         ///< Any other 4xx answer.
  no_such_bucket,      ///< 404 NoSuchBucket.

  // Transient failures: retried by the retry policy.
  server_error,             ///< 5xx on a request whose effect is known not to matter (e.g. GET).
  throttled,                ///< 429, or 503 SlowDown.
  timeout,                  ///< The per-attempt timeout expired.
  resolve_failed,           ///< DNS resolution failed.
  connect_failed,           ///< TCP connect failed (refused, unreachable).
  connection_lost,          ///< The connection was reset or closed mid-request.
  protocol_error,           ///< Not HTTP, or a truncated or malformed reply.
  body_too_large,           ///< The reply body exceeds the configured cap.
  tls_handshake_failed,     ///< TLS handshake failed for a reason other than verification.
  tls_verification_failed,  ///< The server's certificate did not verify (CA, name, expiry).

  // Local problems.
  invalid_config,    ///< A configuration value is invalid; the message says which.
  malformed_record,  ///< A lock record could not be parsed.
  not_leader,        ///< The operation needs leadership this elector does not hold.
  stopped,           ///< The object was stopped or destroyed while the operation was pending.

  // Fencing (appended: values above are stable).
  fenced_out,  ///< A fenced write was refused: a higher term has written the object.

  // Coordination (appended).
  /// async_resign_to named a successor that is not one of this leader's verified candidates.
  unknown_successor,
};

/// The category of s3lect::errc.
const boost::system::error_category& error_category() noexcept;

/// Makes an error_code from an errc (found by argument-dependent lookup).
inline boost::system::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// True for failures the retry policy retries: connection problems, timeouts, 5xx, throttling.
/// False for verdicts (412, 409, 4xx, auth errors) and for cancellation.
bool is_transient(const boost::system::error_code& ec) noexcept;

}  // namespace s3lect::inline v1

// Boost.System's trait, not this library's API: left out of the reference.
/// \cond
template <>
struct boost::system::is_error_code_enum<s3lect::errc> : std::true_type {};
/// \endcond
