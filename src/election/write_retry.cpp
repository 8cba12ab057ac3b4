#include "write_retry.hpp"

#include <s3lect/error.hpp>

namespace s3lect::inline v1::detail {

bool write_retryable(const boost::system::error_code& ec) {
  // throttled here is 429 only: a 503 SlowDown answer to a PUT is errc::outcome_unknown.
  return ec == errc::resolve_failed || ec == errc::connect_failed ||
         ec == errc::tls_handshake_failed || ec == errc::throttled;
}

}  // namespace s3lect::inline v1::detail
