#include "candidate_registry.hpp"

#include "sha256.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>

namespace s3lect::inline v1::detail {

using std::chrono::milliseconds;

candidate_limits candidate_limits_for(const elector_config& config) {
  candidate_limits limits;
  limits.watch_gap =
      std::max<boot_clock::duration>(std::chrono::seconds{1}, config.frequent_interval / 4);
  limits.check_lifetime = 2 * config.infrequent_interval;
  limits.verify_interval = config.frequent_interval;
  limits.rejection_memory = config.infrequent_interval;
  return limits;
}

namespace {

// The pairs remembered beyond the entries: a handful per entry, so that a flood that cycles
// claims through the entries cannot push a recent refutation out of memory.
std::size_t memory_capacity(const candidate_limits& limits) {
  return limits.max_entries * 4;
}

}  // namespace

candidate_registry::candidate_registry(candidate_limits limits)
    : limits_(limits), memory_(memory_capacity(limits)) {}

void candidate_registry::set_limits(candidate_limits limits) {
  const std::lock_guard lock(mutex_);
  limits_ = limits;
  memory_.set_capacity(memory_capacity(limits));
}

void candidate_registry::reset(bool leading) {
  const std::lock_guard lock(mutex_);
  entries_.clear();
  turns_.clear();
  leading_ = leading;
  // A check in flight belongs to the old leadership: its verdict is dropped on arrival.
  ++generation_;
}

void candidate_registry::note(const candidate_claim& claim, time_point now) {
  // Keyed by the token's hash, never by the id alone: a forger claiming a member's id with
  // another token gets an entry of its own and cannot touch the member's.
  std::string token_sha256 = sha256_hex(claim.token);
  const std::lock_guard lock(mutex_);
  if (!leading_) return;
  forget_stale_locked(now);
  entry* e = find_locked(claim.id, token_sha256);
  if (e == nullptr) e = admit_locked(claim, std::move(token_sha256), now);
  if (e == nullptr) return;
  e->last_heard = now;
  if (claim.verified_client && !e->verified) {
    e->verified = true;
    e->by_certificate = true;
  }
  if (e->claimed_priority != claim.priority) {
    // A member certificate vouches for whatever it claims; a registration only for what it
    // says, so a registration-verified entry claiming another priority is checked again.
    e->claimed_priority = claim.priority;
    e->priority = claim.priority;
    if (!e->by_certificate) e->verified = false;
  }
  if (!e->by_certificate) {
    // A pair a registration confirmed, in this leadership or a recent one, needs no new read.
    if (const auto registered = memory_.recall_verified(e->id, e->token_sha256, e->claimed_priority,
                                                        now, limits_.check_lifetime)) {
      e->verified = true;
      e->priority = *registered;
    }
  }
  if (claim.event == candidate_claim::kind::watch_begin) {
    if (e->open_watches.empty() &&
        (!e->ever_watched || now - e->last_watch_end > limits_.watch_gap)) {
      e->watching_since = now;
    }
    e->ever_watched = true;
    e->open_watches.push_back(claim.watch_id);
  } else if (claim.event == candidate_claim::kind::watch_end) {
    std::erase(e->open_watches, claim.watch_id);
    if (e->open_watches.empty()) e->last_watch_end = now;
  }
}

candidate_registry::entry* candidate_registry::find_locked(const std::string& id,
                                                           const std::string& token_sha256) {
  const auto found = std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) {
    return e.id == id && e.token_sha256 == token_sha256;
  });
  return found == entries_.end() ? nullptr : &*found;
}

candidate_registry::entry* candidate_registry::admit_locked(const candidate_claim& claim,
                                                            std::string token_sha256,
                                                            time_point now) {
  // The end of a watch whose entry was evicted or cleared meanwhile starts nothing.
  if (claim.event == candidate_claim::kind::watch_end) return nullptr;
  if (!make_room_locked(claim)) return nullptr;
  entry added;
  added.id = claim.id;
  added.token_sha256 = std::move(token_sha256);
  added.priority = claim.priority;
  added.claimed_priority = claim.priority;
  added.source = claim.source;
  added.watching_since = now;
  added.first_heard = now;
  // A claim refuted before it was evicted or cleared is not read again any sooner for it.
  added.check_after = memory_.refuted_until(added.id, added.token_sha256, now).value_or(now);
  if (turn_locked(added.source) == nullptr) turns_.push_back({added.source, now});
  entries_.push_back(std::move(added));
  return &entries_.back();
}

// Unverified entries make room for a newcomer in the order least useful first: those their
// registration already refuted, then those holding no watch, then the ones heard of longest ago.
// Verified entries are never displaced by an unverified claim, so a flood of claims from
// strangers cannot push a member out; nor can a flood of checks push out a member that holds a
// watch while it waits for its turn to be verified.
bool candidate_registry::make_room_locked(const candidate_claim& claim) {
  const auto evict_unverified = [this](auto&& eligible) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->verified || !eligible(*it)) continue;
      const auto rank = [](const entry& e) {
        return std::tuple(e.check_after <= e.last_heard, !e.open_watches.empty(), e.last_heard);
      };
      if (victim == entries_.end() || rank(*it) < rank(*victim)) victim = it;
    }
    if (victim == entries_.end()) return false;
    entries_.erase(victim);
    forget_turns_locked();
    return true;
  };
  const auto any = [](const entry&) { return true; };
  if (!claim.verified_client) {
    const auto same_source = [&claim](const entry& e) { return e.source == claim.source; };
    const auto from_source = std::count_if(entries_.begin(), entries_.end(), [&](const entry& e) {
      return !e.verified && same_source(e);
    });
    if (static_cast<std::size_t>(from_source) >= limits_.max_unverified_per_source) {
      evict_unverified(same_source);
    }
    const auto unverified =
        std::count_if(entries_.begin(), entries_.end(), [](const entry& e) { return !e.verified; });
    if (static_cast<std::size_t>(unverified) >= limits_.max_unverified) evict_unverified(any);
  }
  if (entries_.size() < limits_.max_entries) return true;
  if (evict_unverified(any)) return true;
  if (!claim.verified_client) return false;
  // A member's certificate displaces the member heard of longest ago.
  const auto oldest =
      std::min_element(entries_.begin(), entries_.end(),
                       [](const entry& a, const entry& b) { return a.last_heard < b.last_heard; });
  entries_.erase(oldest);
  forget_turns_locked();
  return true;
}

bool candidate_registry::alive(const entry& e, time_point now) const {
  return !e.open_watches.empty() || now - e.last_heard <= limits_.check_lifetime;
}

bool candidate_registry::watching(const entry& e, time_point now) const {
  return !e.open_watches.empty() || (e.ever_watched && now - e.last_watch_end <= limits_.watch_gap);
}

void candidate_registry::forget_stale_locked(time_point now) {
  if (std::erase_if(entries_, [&](const entry& e) { return !alive(e, now); }) > 0) {
    forget_turns_locked();
  }
}

candidate_registry::source_turn* candidate_registry::turn_locked(const std::string& source) {
  const auto found = std::find_if(turns_.begin(), turns_.end(),
                                  [&](const source_turn& t) { return t.source == source; });
  return found == turns_.end() ? nullptr : &*found;
}

// A source that lost its last entry loses its place too: when it comes back it waits from then,
// so addresses heard once and kept in reserve cannot queue ahead of a newcomer.
void candidate_registry::forget_turns_locked() {
  std::erase_if(turns_, [this](const source_turn& t) {
    return std::none_of(entries_.begin(), entries_.end(),
                        [&](const entry& e) { return e.source == t.source; });
  });
}

std::vector<const candidate_registry::entry*> candidate_registry::ranked_locked(
    time_point now) const {
  std::vector<const entry*> ranked;
  for (const entry& e : entries_) {
    if (alive(e, now)) ranked.push_back(&e);
  }
  // Ties on priority go to the longest unbroken watch, then to the smaller id.
  std::sort(ranked.begin(), ranked.end(), [this, now](const entry* a, const entry* b) {
    const bool a_watching = watching(*a, now);
    const bool b_watching = watching(*b, now);
    return std::tuple(!a->verified, -std::int64_t{a->priority}, !a_watching, a->watching_since,
                      std::string_view(a->id)) <
           std::tuple(!b->verified, -std::int64_t{b->priority}, !b_watching, b->watching_since,
                      std::string_view(b->id));
  });
  return ranked;
}

std::vector<candidate> candidate_registry::verified(time_point now) const {
  const std::lock_guard lock(mutex_);
  std::vector<candidate> list;
  for (const entry* e : ranked_locked(now)) {
    if (!e->verified) break;  // verified ones come first
    list.push_back({e->id, e->priority, e->watching_since, watching(*e, now), true});
  }
  return list;
}

std::vector<candidate_info> candidate_registry::shown(time_point now) const {
  const std::lock_guard lock(mutex_);
  std::vector<candidate_info> list;
  for (const entry* e : ranked_locked(now)) {
    candidate_info info{e->id, e->priority, std::nullopt, e->verified};
    if (watching(*e, now)) {
      info.watching = std::chrono::duration_cast<milliseconds>(now - e->watching_since);
    }
    list.push_back(std::move(info));
  }
  return list;
}

std::optional<candidate_registry::time_point> candidate_registry::next_change_at(
    time_point now) const {
  const std::lock_guard lock(mutex_);
  std::optional<time_point> at;
  const auto consider = [&](time_point t) {
    if (t > now && (!at || t < *at)) at = t;
  };
  for (const entry& e : entries_) {
    if (!e.open_watches.empty()) continue;
    if (e.ever_watched) consider(e.last_watch_end + limits_.watch_gap + boot_clock::duration{1});
    consider(e.last_heard + limits_.check_lifetime + boot_clock::duration{1});
  }
  return at;
}

bool candidate_registry::checkable(const entry& e, time_point now) const {
  return !e.verified && now >= e.check_after && alive(e, now);
}

// Turns of source addresses, never the claimed priority: a forger claiming 1 000 000 from one
// address (or from a few) gets one check per turn like everyone else, and a member waits for at
// most one check of each source that was waiting before it (docs/peer-mode.md).
const candidate_registry::entry* candidate_registry::next_check_locked(time_point now) {
  if (limits_.order_by_claimed_priority) return highest_claim_locked(now);
  const entry* best = nullptr;
  const auto order = [&](const entry& e) {
    const source_turn* turn = turn_locked(e.source);
    const bool is_watching = watching(e, now);
    return std::tuple(turn == nullptr ? e.first_heard : turn->waiting_since, !is_watching,
                      is_watching ? e.watching_since : e.first_heard, std::string_view(e.source));
  };
  for (const entry& e : entries_) {
    if (checkable(e, now) && (best == nullptr || order(e) < order(*best))) best = &e;
  }
  return best;
}

// The order before issue 35, kept for the negative control of the flood simulation alone.
const candidate_registry::entry* candidate_registry::highest_claim_locked(time_point now) const {
  const entry* best = nullptr;
  for (const entry& e : entries_) {
    if (!checkable(e, now)) continue;
    if (best == nullptr || e.claimed_priority > best->claimed_priority) best = &e;
  }
  return best;
}

std::optional<candidate_verification> candidate_registry::next_verification(time_point now) {
  const std::lock_guard lock(mutex_);
  if (!leading_ || check_in_flight_) return std::nullopt;
  if (last_check_ && now < *last_check_ + limits_.verify_interval) return std::nullopt;
  const entry* best = next_check_locked(now);
  if (best == nullptr) return std::nullopt;
  check_in_flight_ = true;
  last_check_ = now;
  if (source_turn* turn = turn_locked(best->source)) turn->waiting_since = now;  // to the back
  return candidate_verification{generation_, best->id, best->token_sha256, best->claimed_priority};
}

std::optional<candidate_registry::time_point> candidate_registry::next_verification_at(
    time_point now) const {
  const std::lock_guard lock(mutex_);
  if (!leading_ || check_in_flight_) return std::nullopt;
  std::optional<time_point> at;
  // The order of the checks decides which claim goes next, never whether one is due: the same
  // set as next_verification() picks from.
  for (const entry& e : entries_) {
    if (e.verified || !alive(e, now)) continue;
    if (!at || e.check_after < *at) at = e.check_after;
  }
  if (at && last_check_) at = std::max(*at, *last_check_ + limits_.verify_interval);
  return at;
}

void candidate_registry::verification_done(const candidate_verification& checked,
                                           registration_verdict verdict, time_point now) {
  const std::lock_guard lock(mutex_);
  check_in_flight_ = false;
  const bool refuted = verdict.outcome == registration_verdict::kind::not_member;
  // A refutation holds whatever the leadership: the registration names another token (or none).
  if (refuted) memory_.refuted(checked.id, checked.token_sha256, now + limits_.rejection_memory);
  if (checked.generation != generation_) return;
  entry* e = find_locked(checked.id, checked.token_sha256);
  if (e == nullptr || e->verified) return;
  if (refuted) {
    e->check_after = now + limits_.rejection_memory;
  } else if (verdict.outcome == registration_verdict::kind::member &&
             e->claimed_priority == checked.claimed_priority) {
    // A claim changed while it was read is read again: its registration may have changed too.
    e->verified = true;
    e->priority = verdict.priority;  // the registered priority wins over the claimed one
    memory_.verified(e->id, e->token_sha256, e->claimed_priority, verdict.priority, now);
    unverify_other_tokens_locked(*e, now);
  }
}

// A registration names one token at a time: once it confirms (id, token), every other token of
// that id it confirmed before is its no longer. Whoever overwrote a node's registration (a
// principal that may write `KEY.candidates/*`) gets its claim verified, the owner's is refuted
// and the owner rewrites its registration when the leader's record shows the forged priority
// (registration_upkeep.cpp); this keeps the newest registration the only one that counts, so
// after the owner's rewrite the forged claim loses its verification at the next read of the id.
void candidate_registry::unverify_other_tokens_locked(const entry& confirmed, time_point now) {
  for (entry& other : entries_) {
    if (&other == &confirmed || other.id != confirmed.id || other.by_certificate) continue;
    if (!other.verified) continue;
    other.verified = false;
    other.priority = other.claimed_priority;
    other.check_after = now + limits_.rejection_memory;
    memory_.refuted(other.id, other.token_sha256, other.check_after);
  }
}

}  // namespace s3lect::inline v1::detail
