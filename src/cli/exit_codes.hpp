// Exit codes of the s3lect tool: one table for every command, printed by every `--help` (and so
// the man page) and quoted in docs/getting-started.md.
#pragma once

#include <boost/system/error_code.hpp>

#include <string>

namespace s3lect::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,           ///< Unexpected internal failure (a bug, never a user mistake).
  exit_usage = 2,             ///< Bad arguments or configuration, an unreadable file.
  exit_no_record = 3,         ///< `status`, `release`: no lock record; `get`: no object.
  exit_store_error = 4,       ///< The store is unreachable, refused us, or is not S3.
  exit_store_unsafe = 5,      ///< `check`: the store does not honour conditional writes.
  exit_term_mismatch = 6,     ///< `release --if-term T`: the record has another term.
  exit_malformed_record = 7,  ///< The lock record or the fenced object cannot be parsed.
  exit_lost_race = 8,         ///< `release`: the record changed between our read and write.
  exit_cannot_listen = 9,     ///< `run`: --peer-listen or --metrics-listen cannot be bound.
  exit_fenced_out = 10,       ///< `put`: a higher term has written the object.
  exit_timeout = 11,          ///< `run --timeout`: not elected in time.
  exit_not_executable = 126,  ///< `run`: the command exists but cannot be executed.
  exit_not_found = 127,       ///< `run`: the command was not found.
};

/// The table of every exit code, "exit codes:" and one line per code, for every `--help`.
std::string exit_code_table();

/// The exit code for a failed store request of `put`, `get`, `status` or `release`: 7 for a
/// malformed record or object, 10 for a fenced-out write, 4 for everything the store answered
/// or failed to answer.
int exit_code_for_store_error(const boost::system::error_code& error);

}  // namespace s3lect::cli
