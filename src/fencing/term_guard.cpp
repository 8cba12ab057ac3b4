#include <s3lect/term_guard.hpp>

#include <charconv>

namespace s3lect::inline v1 {

std::optional<std::uint64_t> parse_term_header(std::string_view value) noexcept {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty() || value.front() < '0' || value.front() > '9') return std::nullopt;
  std::uint64_t term = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), term);
  if (ec != std::errc{} || end != value.data() + value.size()) return std::nullopt;
  return term;
}

bool term_guard::admit(std::uint64_t term) noexcept {
  std::uint64_t seen = highest_.load(std::memory_order_acquire);
  while (term > seen) {
    // On failure `seen` is reloaded: another thread raised it, so compare again.
    if (highest_.compare_exchange_weak(seen, term, std::memory_order_acq_rel)) return true;
  }
  return term == seen;
}

}  // namespace s3lect::inline v1
