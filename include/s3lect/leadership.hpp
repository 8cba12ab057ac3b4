// What an elector tells of the election: a period of leadership (leadership_lease), the
// elector's view of the election (leadership_status), and what its health endpoint reports
// (leadership_snapshot).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/store_clock_offset.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1 {

/// One period of leadership. `term` is the fencing token: strictly greater than every term
/// before it; pass it to the resources you protect so they can reject a stale leader.
struct leadership_lease {
  std::uint64_t term = 0;    ///< The fencing token.
  std::uint64_t period = 0;  ///< Identifies this leadership period within this elector.
  /// When this elector learnt it leads, by its monotonic clock.
  std::chrono::steady_clock::time_point acquired_at{};
};

/// A follower the leader knows as a candidate for its succession, from the claims its peer
/// endpoint received (docs/peer-mode.md#candidates).
struct candidate_info {
  std::string id;             ///< The server_id it claimed.
  std::int32_t priority = 0;  ///< Its priority: the registered one once verified.
  /// How long its unbroken run of watches has lasted; nullopt when it holds no watch now.
  std::optional<std::chrono::milliseconds> watching;
  /// Only a member could have made the claim (a client certificate in CA mode, or a token that
  /// matches the candidate's registration in the bucket). Unverified candidates decide nothing.
  bool verified = false;

  friend bool operator==(const candidate_info&, const candidate_info&) = default;  ///< Memberwise.
};

/// What a follower polls at: every frequent interval, or every infrequent one once stable.
enum class poll_mode { frequent, stable };

/// A snapshot of an elector's view of the election.
struct leadership_status {
  std::string server_id;                 ///< This elector's server_id.
  std::string lock_key;                  ///< The key of the lock record.
  bool running = false;                  ///< Between start() and the end of a stop.
  bool is_leader = false;                ///< Whether this elector holds the lock now.
  std::string leader_id;                 ///< Empty when nobody holds the lock (absent or released).
  std::string leader_addr;               ///< The leader's server_address as its record gives it.
  std::uint64_t term = 0;                ///< Term of the last record seen or written.
  poll_mode mode = poll_mode::frequent;  ///< What a follower polls at now.
  /// When this elector last saw the leader's record change, or renewed it itself.
  std::optional<std::chrono::system_clock::time_point> leader_last_seen;
  /// When the last election cycle (a read or write and its decision) completed.
  std::optional<std::chrono::system_clock::time_point> last_election_time;
  unsigned consecutive_failures = 0;  ///< Failed election cycles in a row since the last success.
  std::string last_error;             ///< The last storage or record error, for diagnostics.
  /// The code of last_error: compare with s3lect::errc (e.g. errc::signature_mismatch). Like
  /// last_error, kept after the elector recovers; consecutive_failures tells whether it did.
  boost::system::error_code last_error_code;
  /// This node's wall clock against the store's; unset before the first answer with a `Date`.
  std::optional<store_clock_offset> clock_offset;
  std::uint64_t version = 0;  ///< Increases on every change of leader, term or is_leader.
  /// Leader in peer mode only: its candidates, verified ones first, then by priority (highest
  /// first). A change of them does not move `version`.
  std::vector<candidate_info> candidates;
};

/// What the health endpoint reports, read from the elector at one instant.
struct leadership_snapshot {
  bool is_leader = false;  ///< Whether this elector holds the lock now.
  /// Leader: the term it holds. Follower: the term of the last record it saw.
  std::uint64_t term = 0;
  /// Leader only: the JSON body of its last *successful* write (never a record stamped "now",
  /// which would hide a leader that can no longer reach the store).
  std::string record_json;
  /// Leader only: how long its lease lasts from now, as the leader counts it.
  std::chrono::milliseconds lease_remaining{0};
  /// Leader only: how long ago the write of record_json was sent, by the leader's monotonic
  /// clock, rounded down; nullopt when unknown. Sent as "writeAgeMs", so that a follower can
  /// count the lease from the write rather than from when the answer reached it.
  std::optional<std::chrono::milliseconds> write_age;
  /// The current leader as last seen; empty when none is known.
  std::string leader_id;
  /// Leader only: increases on every successful write of the lock record (acquisition and
  /// renewals). A watch may ask to be answered when it changes (`&serial=`), which tells the
  /// follower of each renewal as it lands.
  std::uint64_t serial = 0;
  /// Not leader, after this elector released the lock: the ETag and term of the released record
  /// it wrote, until it sees anyone lead again. Sent in the 404 answer ("releasedETag",
  /// "releasedTerm") so that a watching follower can write its takeover at once with If-Match
  /// on that ETag (docs/safety-and-fencing.md#one-round-trip-handover). Empty: nothing to tell.
  std::string released_etag;
  std::uint64_t released_term = 0;  ///< The released record's term, with released_etag.
  /// With released_etag: the successor that released record names and its handoverMs, sent as
  /// "successor" and "handoverMs" so that watchers order their takeovers as a read of it would
  /// (docs/coordination.md). Empty / nullopt: the record names none.
  std::string released_successor;
  /// The handoverMs of the released record.
  std::optional<std::chrono::milliseconds> released_handover;
  /// Increases whenever is_leader, term, leader_id or serial changes.
  std::uint64_t version = 0;
  /// Leader only: its candidates as in leadership_status::candidates, sent in the 200 answer
  /// as "liveCandidates". A change of them does not move `version`.
  std::vector<candidate_info> candidates;
};

}  // namespace s3lect::inline v1
