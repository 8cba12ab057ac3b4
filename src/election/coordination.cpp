#include "coordination.hpp"

#include <algorithm>
#include <tuple>

namespace s3lect::inline v1::detail {

using std::chrono::milliseconds;

namespace {

// Only a verified claim decides anything, and only a held watch tells that the candidate is
// there now, to see a release within milliseconds.
std::vector<const candidate*> eligible_in_order(const std::vector<candidate>& candidates,
                                                std::string_view self) {
  std::vector<const candidate*> eligible;
  for (const candidate& c : candidates) {
    if (c.verified && c.watching && c.id != self) eligible.push_back(&c);
  }
  std::sort(eligible.begin(), eligible.end(), [](const candidate* a, const candidate* b) {
    return std::tie(b->priority, a->watching_since, a->id) <
           std::tie(a->priority, b->watching_since, b->id);
  });
  return eligible;
}

}  // namespace

std::optional<std::string> best_successor(const std::vector<candidate>& candidates,
                                          std::string_view self) {
  const std::vector<const candidate*> eligible = eligible_in_order(candidates, self);
  if (eligible.empty()) return std::nullopt;
  return eligible.front()->id;
}

std::vector<ranked_candidate> ranked(const std::vector<candidate>& candidates,
                                     std::string_view self) {
  std::vector<ranked_candidate> out;
  for (const candidate* c : eligible_in_order(candidates, self)) {
    if (out.size() == max_record_candidates) break;
    out.push_back({c->id, c->priority});
  }
  return out;
}

milliseconds rank_delay(const lock_record& record, std::string_view self,
                        const elector_config& config) {
  if (record.candidates.empty()) return milliseconds::zero();
  const auto listed = std::find_if(record.candidates.begin(), record.candidates.end(),
                                   [self](const ranked_candidate& c) { return c.id == self; });
  const auto rank = static_cast<unsigned>(listed - record.candidates.begin());
  const unsigned ranks = std::min(rank, config.coordination.max_ranks);
  return config.rank_step() * ranks;
}

std::optional<milliseconds> release_hold_off(const lock_record& record, std::string_view self,
                                             const elector_config& config) {
  const bool names_successor = !record.successor.empty();
  if (!names_successor && record.keep_out.empty()) return std::nullopt;
  const bool held_off = names_successor ? record.successor != self : record.keep_out == self;
  if (!held_off) return milliseconds::zero();
  return std::min(record.handover.value_or(config.handover_window()), config.lease);
}

}  // namespace s3lect::inline v1::detail
