#include "candidate_registry.hpp"

#include "sha256.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>

namespace s3lect::detail {

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

candidate_registry::candidate_registry(candidate_limits limits) : limits_(limits) {}

void candidate_registry::set_limits(candidate_limits limits) {
  const std::lock_guard lock(mutex_);
  limits_ = limits;
}

void candidate_registry::reset(bool leading) {
  const std::lock_guard lock(mutex_);
  entries_.clear();
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
  added.check_after = now;
  entries_.push_back(std::move(added));
  return &entries_.back();
}

// Unverified entries make room for a newcomer in the order least useful first: those their
// registration already refuted, then the ones heard of longest ago. Verified entries are never
// displaced by an unverified claim, so a flood of claims from strangers cannot push a member out.
bool candidate_registry::make_room_locked(const candidate_claim& claim) {
  const auto evict_unverified = [this](auto&& eligible) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->verified || !eligible(*it)) continue;
      const auto rank = [](const entry& e) {
        return std::tuple(e.check_after <= e.last_heard, e.last_heard);
      };
      if (victim == entries_.end() || rank(*it) < rank(*victim)) victim = it;
    }
    if (victim == entries_.end()) return false;
    entries_.erase(victim);
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
  return true;
}

bool candidate_registry::alive(const entry& e, time_point now) const {
  return !e.open_watches.empty() || now - e.last_heard <= limits_.check_lifetime;
}

bool candidate_registry::watching(const entry& e, time_point now) const {
  return !e.open_watches.empty() || (e.ever_watched && now - e.last_watch_end <= limits_.watch_gap);
}

void candidate_registry::forget_stale_locked(time_point now) {
  std::erase_if(entries_, [&](const entry& e) { return !alive(e, now); });
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

std::optional<candidate_verification> candidate_registry::next_verification(time_point now) {
  const std::lock_guard lock(mutex_);
  if (!leading_ || check_in_flight_) return std::nullopt;
  if (last_check_ && now < *last_check_ + limits_.verify_interval) return std::nullopt;
  const entry* best = nullptr;
  for (const entry& e : entries_) {
    if (e.verified || now < e.check_after || !alive(e, now)) continue;
    if (best == nullptr || e.claimed_priority > best->claimed_priority) best = &e;
  }
  if (best == nullptr) return std::nullopt;
  check_in_flight_ = true;
  last_check_ = now;
  return candidate_verification{generation_, best->id, best->token_sha256, best->claimed_priority};
}

std::optional<candidate_registry::time_point> candidate_registry::next_verification_at(
    time_point now) const {
  const std::lock_guard lock(mutex_);
  if (!leading_ || check_in_flight_) return std::nullopt;
  std::optional<time_point> at;
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
  if (checked.generation != generation_) return;
  entry* e = find_locked(checked.id, checked.token_sha256);
  if (e == nullptr || e->verified) return;
  switch (verdict.outcome) {
    case registration_verdict::kind::member:
      e->verified = true;
      e->priority = verdict.priority;  // the registered priority wins over the claimed one
      break;
    case registration_verdict::kind::not_member:
      e->check_after = now + limits_.rejection_memory;
      break;
    case registration_verdict::kind::unknown:
      break;
  }
}

}  // namespace s3lect::detail
