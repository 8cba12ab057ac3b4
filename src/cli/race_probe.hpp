// The concurrency probe of `s3lect check`: many writers race one conditional write, and exactly
// one may win. A store can pass every sequential probe and still let two racing writers win
// (its condition check and its write are not one atomic step): only a race shows that.
#pragma once

#include <s3lect/storage.hpp>

#include <boost/asio/awaitable.hpp>

#include <map>
#include <string>
#include <vector>

namespace s3lect::cli {

/// How one race ended. A winner is a writer whose write is in the store: one answered success,
/// or one whose ambiguous answer (409, 5xx, no answer) the re-read after the race showed to be
/// its write.
struct race_result {
  int winners = 0;
  int refused = 0;      ///< Answered 412 (or 404 for If-Match), and the re-read agrees.
  int unresolved = 0;   ///< Answered ambiguously; the re-read showed another writer's write.
  std::string problem;  ///< Why this race makes the store unsafe; empty when it does not.
};

/// One round: a create-if-absent race on a new key, then an If-Match race on its ETag.
struct race_round {
  race_result create;
  race_result replace;
};

/// What the rounds found.
struct race_findings {
  std::vector<race_round> rounds;
  /// The answers other than success, by HTTP status ("412", "409", "500"), or "no answer" for
  /// a timeout or a lost connection; "(then found written)" marks those the re-read showed won.
  std::map<std::string, int> other_answers;
  std::string unsafe_reason;      ///< The first race that made the store unsafe.
  std::string store_error;        ///< Why the races could not be run to the end (a failed re-read).
  std::vector<std::string> keys;  ///< The keys written, for the caller to delete.
};

/// Runs `rounds` rounds on fresh keys named `key_prefix`-1, -2, ...: every storage in
/// `writers` races create-if-absent, then If-Match on the created object's ETag; `reader`
/// re-reads after each race. Each writer should have its own connection, as separate processes
/// would. Stops at the first race that makes the store unsafe or cannot be resolved.
boost::asio::awaitable<race_findings> run_races(std::vector<storage*> writers, storage& reader,
                                                std::string key_prefix, int rounds);

/// The report lines of `findings` ("ok", "info" or "FAIL" first), for `writers` writers.
std::vector<std::string> describe_races(const race_findings& findings, int writers);

}  // namespace s3lect::cli
