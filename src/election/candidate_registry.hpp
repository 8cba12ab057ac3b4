// What a leader knows of its candidates (docs/peer-mode.md#candidates): the claims its peer
// endpoint heard, bounded so that no client can crowd out the members, and which of them are
// verified. Only verified entries reach the core: a claim that merely says a high priority must
// move nothing (docs/peer-mode.md#claims-that-cannot-be-forged). Sans-I/O: every call takes
// "now"; the elector performs the registration reads it asks for. Thread-safe.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/health.hpp>
#include <s3lect/leadership.hpp>

#include "boot_clock.hpp"
#include "candidate.hpp"
#include "candidate_memory.hpp"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

/// The bounds and times of a candidate_registry.
struct candidate_limits {
  std::size_t max_entries = 32;
  std::size_t max_unverified = 16;
  std::size_t max_unverified_per_source = 4;
  /// A watch that begins within this of the previous one's end continues its run: max(1 s, F/4).
  boot_clock::duration watch_gap{};
  /// A candidate heard of by checks alone is forgotten this long after the last one: 2 I.
  boot_clock::duration check_lifetime{};
  /// At most one registration read per this: F.
  boot_clock::duration verify_interval{};
  /// A claim its registration did not confirm is not read again for this: I.
  boot_clock::duration rejection_memory{};
  /// Test only (the negative control of candidate_flood_simulation_test): check the highest
  /// claimed priority first, as before issue 35, instead of in turns of source addresses. A
  /// forger claiming a high priority then starves every member's verification; never set it.
  bool order_by_claimed_priority = false;
};

/// The limits for an elector with `config`.
candidate_limits candidate_limits_for(const elector_config& config);

/// A claim to check against the claimant's registration object.
struct candidate_verification {
  std::uint64_t generation = 0;  ///< The registry's leadership it belongs to.
  std::string id;
  std::string token_sha256;
  std::int32_t claimed_priority = 0;
};

/// What the claimant's registration said of a candidate_verification.
struct registration_verdict {
  enum class kind {
    member,      ///< It names the id and the token's hash: verified at `priority`.
    not_member,  ///< Absent, or another token: not read again for rejection_memory.
    unknown,     ///< The read failed: tried again at the next budget.
  };
  kind outcome = kind::unknown;
  std::int32_t priority = 0;  ///< The registered priority (kind::member).
};

class candidate_registry {
 public:
  using time_point = boot_clock::time_point;

  explicit candidate_registry(candidate_limits limits);

  /// New limits (update_config()); the entries stay.
  void set_limits(candidate_limits limits);

  /// Forgets every candidate (each change of our leadership); from now on claims are kept only
  /// while `leading`. The candidate_memory stays: a claim refuted is still not read again for
  /// rejection_memory, and a claim verified and heard within check_lifetime is verified again at
  /// once when it is heard, without a read.
  void reset(bool leading);

  /// Applies one claim heard at `now`.
  void note(const candidate_claim& claim, time_point now);

  /// The verified candidates, best first (highest priority, then the longest watching): what
  /// the core decides by. A candidate counts as watching while a watch of it is held, and for
  /// watch_gap after its last one ended: a follower asks again as soon as an answer arrives,
  /// and a watch begun within the gap continues its run, so the answer's round trip neither
  /// hides it nor restarts its settle time.
  std::vector<candidate> verified(time_point now) const;

  /// When verified() or shown() may next change with no new claim (a watch's gap runs out, a
  /// candidate heard of by checks alone is forgotten); nullopt: not before a new claim.
  std::optional<time_point> next_change_at(time_point now) const;

  /// Every candidate known, verified ones first, for status and the health answer.
  std::vector<candidate_info> shown(time_point now) const;

  /// The claim to check now: none while a check is in flight, within verify_interval of the
  /// last one, or with nothing to check. The claimed priority plays no part (the registered one
  /// wins once verified): source addresses take turns, the one that has waited longest first,
  /// counted from its last check, or from when it was first heard if it has not been checked
  /// since; within a source, the longest-watching claim first (a watching one before one that
  /// is not, then the earliest watching_since, then the earliest first heard). So a claimant
  /// waits for at most one check of each other source heard of when it was (docs/peer-mode.md).
  std::optional<candidate_verification> next_verification(time_point now);

  /// When next_verification() will have something to hand out (nullopt: not before a new
  /// claim, or while a check is in flight).
  std::optional<time_point> next_verification_at(time_point now) const;

  /// The result of the check next_verification() handed out.
  void verification_done(const candidate_verification& checked, registration_verdict verdict,
                         time_point now);

 private:
  struct entry {
    std::string id;
    std::string token_sha256;
    std::int32_t priority = 0;  // as claimed; the registered one once verified
    std::int32_t claimed_priority = 0;
    std::string source;
    bool verified = false;
    bool by_certificate = false;  // verified by a client certificate (mutual TLS)
    std::vector<std::uint64_t> open_watches;
    time_point watching_since{};
    time_point last_watch_end{};
    bool ever_watched = false;
    time_point first_heard{};
    time_point last_heard{};
    time_point check_after{};  // not offered for verification before this
  };

  // A source address's place in the turns of next_verification(): kept while it has an entry.
  struct source_turn {
    std::string source;
    time_point waiting_since{};  // its last check, or when it was first heard
  };

  entry* find_locked(const std::string& id, const std::string& token_sha256);
  void unverify_other_tokens_locked(const entry& confirmed, time_point now);
  entry* admit_locked(const candidate_claim& claim, std::string token_sha256, time_point now);
  bool make_room_locked(const candidate_claim& claim);
  void forget_stale_locked(time_point now);
  bool alive(const entry& e, time_point now) const;
  bool watching(const entry& e, time_point now) const;
  std::vector<const entry*> ranked_locked(time_point now) const;
  bool checkable(const entry& e, time_point now) const;
  const entry* next_check_locked(time_point now);
  const entry* highest_claim_locked(time_point now) const;
  source_turn* turn_locked(const std::string& source);
  void forget_turns_locked();

  mutable std::mutex mutex_;
  candidate_limits limits_;
  std::vector<entry> entries_;
  std::vector<source_turn> turns_;
  candidate_memory memory_;
  bool leading_ = false;
  std::uint64_t generation_ = 0;
  bool check_in_flight_ = false;
  std::optional<time_point> last_check_;
};

}  // namespace s3lect::inline v1::detail
