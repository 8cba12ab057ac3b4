// The lock record stored at the lock key: a JSON superset of the Go s3lect format, so Go and
// C++ nodes read each other's records (docs/algorithm.md#the-lock-record).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::inline v1 {

/// Larger bodies are refused unread: no writer of ours comes near it.
inline constexpr std::size_t max_record_bytes = 64 * 1024;
/// Larger terms are refused: above 2^53 a JavaScript or double-based reader loses precision.
inline constexpr std::uint64_t max_record_term = std::uint64_t{1} << 53;
/// Larger leaseMs values are refused: a writer that claims a lease of days is broken.
inline constexpr std::chrono::milliseconds max_record_lease{std::chrono::hours{24}};
/// A lastUpdated at or after this instant is refused: std::chrono::system_clock counts
/// nanoseconds in 64 bits and ends in 2262. A fixed limit, not one relative to the reader's
/// clock: a reader with a wrong clock must not find a healthy record unreadable, which would hide
/// its term and lease from it (no decision reads lastUpdated).
inline constexpr std::chrono::sys_days max_record_time{std::chrono::year{2200} / 1 / 1};

/// The largest priority (and the negative of the smallest) a record may carry. Coordination
/// fields beyond their limits are ignored, not fatal: they only order who writes first, and
/// losing that order is always safe (docs/coordination.md).
inline constexpr std::int32_t max_record_priority = 1'000'000;
/// The most candidates a record lists; more are ignored.
inline constexpr std::size_t max_record_candidates = 8;

/// A candidate the leader ranks in its record: its server id and verified priority.
struct ranked_candidate {
  std::string id;             ///< The candidate's server_id.
  std::int32_t priority = 0;  ///< Its verified priority.

  /// Memberwise.
  friend bool operator==(const ranked_candidate&, const ranked_candidate&) = default;
};

/// One lock record. Records of Go writers have no term, lease, released flag or nonce.
struct lock_record {
  std::string leader_id;    ///< JSON "leaderID".
  std::string leader_addr;  ///< JSON "leaderAddr".
  /// JSON "lastUpdated": the writer's wall clock just before it sent the write. The epoch when
  /// the record carried Go's zero time (which marks a released record).
  std::chrono::system_clock::time_point last_updated{};
  /// JSON "term": the fencing token; 0 when absent (Go writers).
  std::uint64_t term = 0;
  /// JSON "leaseMs": the writer's lease; absent in Go records.
  std::optional<std::chrono::milliseconds> lease;
  /// JSON "released", or Go's zero "lastUpdated": anyone may take over at once.
  bool released = false;
  /// JSON "nonce": random per write, so every write has its own body and ETag.
  std::string nonce;
  /// JSON "peerKeyPin", written only when set: the public_key_pin() of the certificate the
  /// leader's health endpoint presents in zero-configuration TLS (docs/peer-mode.md). Followers
  /// trust that certificate by this pin. Absent in Go records and in CA mode.
  std::string key_pin;
  /// JSON "priority", written when set: the writer's coordination.priority.
  std::optional<std::int32_t> priority;
  /// JSON "candidates", written when non-empty: the leader's verified, watching candidates,
  /// itself excluded, best first (at most max_record_candidates): the crash-failover ranks.
  std::vector<ranked_candidate> candidates;
  /// JSON "successor", in a released record: who should take it first.
  std::string successor;
  /// JSON "handoverMs", with successor or keep_out: how long everyone else holds off, counted
  /// from the reader's own first sight of the record (and clamped to the reader's lease).
  std::optional<std::chrono::milliseconds> handover;
  /// JSON "keepOut", in a released record: the holder a forced release put out, which holds off
  /// for `handover` so that another node takes over.
  std::string keep_out;
  /// Not encoded: why a coordination field of a decoded record was ignored (empty: none was).
  std::string coordination_note;

  friend bool operator==(const lock_record&, const lock_record&) = default;  ///< Memberwise.
};

/// Serialises `record` as the JSON of docs/algorithm.md#the-lock-record, lastUpdated as RFC 3339
/// UTC with milliseconds (rounded up). A released record is written with Go's zero lastUpdated,
/// "0001-01-01T00:00:00Z", so that Go readers, which know no "released" field, see it expired
/// and take over at once too.
std::string encode_record(const lock_record& record);

/// The outcome of decode_record: a record, or errc::malformed_record and what is wrong.
struct record_decoding {
  std::optional<lock_record> record;  ///< Set when the body is a valid record.
  boost::system::error_code error;    ///< errc::malformed_record when `record` is empty.
  std::string message;                ///< Why, naming the field: "term: must be at most 2^53".
};

/// Parses a lock record written by s3lect (C++ or Go). Ignores unknown fields. Refuses, with a
/// message: bodies over max_record_bytes, anything but a JSON object, fields of the wrong type,
/// a missing or empty leaderID (unless released), a missing or unparsable lastUpdated, one
/// before 1970 (other than Go's zero time) or at or after max_record_time, a negative,
/// fractional or > 2^53 term, a leaseMs outside 1 ms .. 24 h. No clock is read. Never throws.
/// Ill-typed or out-of-range coordination fields (priority, candidates, successor, handoverMs,
/// keepOut) are dropped instead, with the reason in coordination_note.
record_decoding decode_record(std::string_view body);

/// The decoding of a body its reader cut after `bytes_read` bytes (object::truncated): refused
/// as over max_record_bytes, without parsing the part that was read.
record_decoding decode_truncated_record(std::size_t bytes_read);

/// A fresh nonce: 16 lowercase hex digits (64 bits) from std::random_device, which holds no
/// state a fork could duplicate.
std::string make_nonce();

}  // namespace s3lect::inline v1
