// Exit codes of the s3lect tool, documented in `s3lect --help`.
#pragma once

namespace s3lect::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,       ///< Unexpected internal failure.
  exit_usage = 2,         ///< Bad arguments or configuration.
  exit_no_record = 3,     ///< `status`: there is no lock record.
  exit_store_error = 4,   ///< The store is unreachable or refused us (auth, TLS, bucket).
  exit_store_unsafe = 5,  ///< `check`: the store does not honour conditional writes.
};

}  // namespace s3lect::cli
