// The check a resource makes on work sent by leaders (the "API provider" of fencing): keep the
// highest term seen and refuse any lower one. Terms travel in the HTTP header `S3lect-Term`.
// docs/safety-and-fencing.md shows both ends.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace s3lect::inline v1 {

/// The HTTP header that carries a leader's term (decimal, e.g. `S3lect-Term: 42`) on requests
/// to a service that fences them. `s3lect run` exports the same number as $S3LECT_TERM.
inline constexpr std::string_view term_header = "S3lect-Term";

/// The term in a header value: decimal digits only, surrounding blanks allowed; nullopt for
/// anything else (a request whose term cannot be read must be refused, not treated as 0).
std::optional<std::uint64_t> parse_term_header(std::string_view value) noexcept;

/// The highest term seen by one resource. Thread-safe: any number of threads may call any
/// member at once. Terms only ever rise; equal terms are the same leader and are admitted.
class term_guard {
 public:
  /// A guard that has already seen `highest_seen` (restore it from durable state on restart,
  /// or a zombie's term is admitted again).
  explicit term_guard(std::uint64_t highest_seen = 0) noexcept : highest_(highest_seen) {}

  /// True when `term` is below the highest term seen: the sender has been superseded.
  bool is_stale(std::uint64_t term) const noexcept { return term < highest_seen(); }

  /// Admits `term` unless it is stale, raising the highest term seen to it. Returns whether
  /// it was admitted. Admission alone does not order the work that follows it: use
  /// apply_if_current when admitted work must not land after a higher term's.
  bool admit(std::uint64_t term) noexcept;

  /// Runs `work()` if `term` is admitted, holding the guard's lock until it returns, so that no
  /// higher term is admitted while it runs and no stale work runs after a higher term's.
  /// Returns whether it ran. `work` must not call back into this guard.
  template <class Work>
  bool apply_if_current(std::uint64_t term, Work&& work) {
    const std::lock_guard lock(apply_mutex_);
    if (!admit(term)) return false;
    std::forward<Work>(work)();
    return true;
  }

  /// The highest term admitted so far (or given to the constructor).
  std::uint64_t highest_seen() const noexcept { return highest_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::uint64_t> highest_;
  std::mutex apply_mutex_;
};

}  // namespace s3lect::inline v1
