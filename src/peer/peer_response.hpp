// The peer health check's answer without I/O: turns a leader's HTTP status, X-S3lect-Watch
// header and body into a peer_answer or an error. Pure functions, unit-tested directly; the
// transport (peer_client.cpp) only feeds them what it read.
#pragma once

#include <s3lect/record.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Why a watch request was answered, as the leader's X-S3lect-Watch header says.
enum class peer_watch_outcome {
  none,      ///< No (or an unknown) header: the leader does not watch (a Go leader, or no watch
             ///< was asked for). Poll it instead of re-asking at once.
  changed,   ///< The state was not, or is no longer, "leader with the watched term".
  timeout,   ///< The watch time passed with nothing changed.
  refused,   ///< Not held (too many watchers, watching disabled): do not re-ask in a tight loop.
  stopping,  ///< The leader's server is shutting down.
};

/// "none", "changed", "timeout", "refused" or "stopping".
std::string_view to_string(peer_watch_outcome outcome) noexcept;

/// Reads an X-S3lect-Watch header value; an empty or unknown value is peer_watch_outcome::none.
peer_watch_outcome parse_watch_outcome(std::string_view header) noexcept;

/// What a peer's health endpoint said. On failure only `http_status` (when an answer arrived)
/// and `message` are meaningful.
struct peer_answer {
  /// True on 200 (the peer leads), false on 404 (it does not).
  bool leader = false;
  /// Leader only: its last successful write, decoded with decode_record.
  lock_record record;
  /// Leader: the term it holds (0 from a Go leader, whose records have none). Follower: the
  /// term it last saw, when its 404 body says (s3lect does), else 0.
  std::uint64_t term = 0;
  /// Leader only: how long its lease lasts from when it answered, as it counts. nullopt when it
  /// did not say (Go leaders).
  std::optional<std::chrono::milliseconds> lease_remaining;
  /// Leader only: how long before answering it sent the write it reports, by its own clock;
  /// nullopt when it did not say (Go leaders, older s3lect).
  std::optional<std::chrono::milliseconds> write_age;
  /// Leader only: its write serial (s3lect's watch extension), nullopt when it did not say.
  std::optional<std::uint64_t> serial;
  /// Leader: record.leader_id. Follower: the leader it knows, when its 404 body says, else "".
  std::string leader_id;
  /// Follower (404) only: the record it released, when its body says ("releasedETag",
  /// "releasedTerm"): whoever writes If-Match on `etag` replaces exactly that record. The
  /// successor it names and its handoverMs come along when the body has them ("successor",
  /// "handoverMs"; ignored when ill-typed or out of range, as in a record).
  struct released_record {
    std::string etag;
    std::uint64_t term = 0;
    std::string successor;
    std::optional<std::chrono::milliseconds> handover;
  };
  std::optional<released_record> released;
  /// The X-S3lect-Watch header.
  peer_watch_outcome watch = peer_watch_outcome::none;
  /// The HTTP status; 0 when no answer arrived.
  unsigned http_status = 0;
  /// Why the check failed, for logs: "leaseRemainingMs: must be an integer". Empty on success.
  std::string message;
};

/// A peer_answer, or the error that the answer amounts to (with answer.message saying why).
struct peer_parsing {
  boost::system::error_code error;
  peer_answer answer;
};

/// Longest leaseRemainingMs accepted: no lease lasts longer than a record's leaseMs may.
inline constexpr std::chrono::milliseconds max_lease_remaining = max_record_lease;

/// Interprets one answer of a health endpoint. Never throws.
/// - 200: the record (decode_record), its "term", and "leaseRemainingMs" (optional; a
///   non-negative integer up to max_lease_remaining). A body that is not such a record, or a
///   field of the wrong type, is errc::protocol_error naming the field.
/// - 404: not an error: leader = false. The body is informational: "leaderID" and "term" are
///   taken when present with the right type, anything else (Go's text, garbage) is ignored.
/// - 429: errc::throttled. 5xx: errc::server_error (a stopping s3lect server answers 503).
///   Other 4xx: errc::bad_request. Anything else (1xx, 2xx but 200, 3xx): errc::protocol_error.
/// - A body over `max_body_bytes`, whatever the status: errc::body_too_large.
peer_parsing parse_peer_response(unsigned status, std::string_view watch_header,
                                 std::string_view body, std::size_t max_body_bytes);

}  // namespace s3lect::inline v1::detail
