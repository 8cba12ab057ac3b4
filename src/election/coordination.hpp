// Coordinated leadership without I/O (docs/coordination.md): who a leader names as its successor,
// how it ranks its candidates in its records, and how long a follower holds off before it writes
// a takeover. Every answer only orders *when* a node sends its conditional write; who leads is
// still decided by that write alone.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/record.hpp>

#include "candidate.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::inline v1::detail {

/// The candidate a leader names in its released record: among the verified candidates whose
/// watch is held now, other than `self`, the highest priority; ties go to the earliest
/// watching_since (the longest proven, so a node that just restarted is not favoured), then to
/// the smaller id. nullopt when there is none.
std::optional<std::string> best_successor(const std::vector<candidate>& candidates,
                                          std::string_view self);

/// The candidates best_successor() would choose from, in its order, the first
/// max_record_candidates: the ranks a leader writes into its records for crash failover.
std::vector<ranked_candidate> ranked(const std::vector<candidate>& candidates,
                                     std::string_view self);

/// How much later than the expiry moment `self` competes for `record` (a held record): its rank
/// r in record.candidates (0 = best) gives min(r, max_ranks) x rank_step, an unlisted node
/// max_ranks x rank_step. Zero when the record lists no candidates, so that groups without
/// coordination keep today's timing.
std::chrono::milliseconds rank_delay(const lock_record& record, std::string_view self,
                                     const elector_config& config);

/// How long after its first sight of the released `record` `self` holds off before writing its
/// takeover: a record naming a successor holds off everyone but the successor; one naming only
/// a keepOut holds off the node kept out. The record's handoverMs (or, when absent, the reader's
/// own handover_window()) is clamped to the reader's lease, so no record holds a node off for
/// longer. nullopt when the record names nobody.
std::optional<std::chrono::milliseconds> release_hold_off(const lock_record& record,
                                                          std::string_view self,
                                                          const elector_config& config);

}  // namespace s3lect::inline v1::detail
