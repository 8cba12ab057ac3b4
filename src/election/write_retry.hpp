// Which failed conditional PUTs may simply be sent again: a sans-I/O rule of the election.
#pragma once

#include <boost/system/error_code.hpp>

namespace s3lect::inline v1::detail {

/// Storage errors after which a conditional PUT certainly did not happen, so sending it again
/// is safe. Everything else ambiguous (timeouts, lost connections, 5xx, 503 SlowDown) is
/// resolved by the core with a re-read, never by a blind retry that could answer 412 to our own
/// earlier write.
bool write_retryable(const boost::system::error_code& ec);

}  // namespace s3lect::inline v1::detail
