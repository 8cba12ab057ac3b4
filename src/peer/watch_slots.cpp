#include "watch_slots.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {

std::size_t watch_slots::anonymous_from(const std::string& source) const {
  return static_cast<std::size_t>(
      std::count_if(holders_.begin(), holders_.end(),
                    [&source](const holder& h) { return !h.verified && h.source == source; }));
}

std::optional<std::size_t> watch_slots::victim_for(const std::string& source, bool verified) const {
  // The source holding the most anonymous watches gives one up: to a verified client always,
  // to an anonymous one only if that leaves it holding at least as many as the newcomer.
  std::optional<std::size_t> victim;
  std::size_t most = 0;
  for (std::size_t i = 0; i < holders_.size(); ++i) {
    if (holders_[i].verified || holders_[i].source.empty()) continue;
    const std::size_t count = anonymous_from(holders_[i].source);
    if (count > most) {
      most = count;
      victim = i;  // the first seen of a source is its oldest
    }
  }
  if (!victim && verified) {
    const auto oldest =
        std::find_if(holders_.begin(), holders_.end(), [](const holder& h) { return !h.verified; });
    if (oldest != holders_.end()) victim = static_cast<std::size_t>(oldest - holders_.begin());
  }
  if (!verified && (source.empty() || most < anonymous_from(source) + 2)) return std::nullopt;
  return victim;
}

watch_slots::decision watch_slots::admit(const std::string& source, bool verified) {
  decision out;
  if (max_watchers_ == 0) return out;
  if (!verified &&
      (max_per_source_ == 0 || (!source.empty() && anonymous_from(source) >= max_per_source_))) {
    return out;
  }
  if (holders_.size() >= max_watchers_) {
    const std::optional<std::size_t> victim = victim_for(source, verified);
    if (!victim) return out;
    out.evicted = holders_[*victim].id;
    holders_.erase(holders_.begin() + static_cast<std::ptrdiff_t>(*victim));
  }
  out.admitted = next_++;
  holders_.push_back({*out.admitted, source, verified});
  return out;
}

void watch_slots::release(ticket held) {
  std::erase_if(holders_, [held](const holder& h) { return h.id == held; });
}

}  // namespace s3lect::inline v1::detail
