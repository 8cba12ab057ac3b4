// Exit codes of the s3lect tool, documented in `s3lect --help`.
#pragma once

namespace s3lect::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,           ///< Unexpected internal failure.
  exit_usage = 2,             ///< Bad arguments or configuration.
  exit_no_record = 3,         ///< `status`, `release`: there is no lock record.
  exit_store_error = 4,       ///< The store is unreachable or refused us (auth, TLS, bucket).
  exit_store_unsafe = 5,      ///< `check`: the store does not honour conditional writes.
  exit_term_mismatch = 6,     ///< `release --if-term T`: the record has another term.
  exit_malformed_record = 7,  ///< `status`, `release`: the lock record cannot be parsed.
  exit_lost_race = 8,         ///< `release`: the record changed between our read and write.
  exit_cannot_listen = 9,     ///< `run`: --peer-listen or --metrics-listen cannot be bound.
  exit_fenced_out = 10,       ///< `put`: a higher term has written the object.
  exit_timeout = 11,          ///< `run --timeout`: not elected in time.
  exit_not_executable = 126,  ///< `run`: the command exists but cannot be executed.
  exit_not_found = 127,       ///< `run`: the command was not found.
};

}  // namespace s3lect::cli
