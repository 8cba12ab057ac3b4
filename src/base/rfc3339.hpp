// RFC 3339 timestamps as the lock record spells them: written in UTC with milliseconds, read in
// any form Go's time.RFC3339(Nano) produces (any fraction, any UTC offset).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// An instant read from an RFC 3339 timestamp, in a range wider than system_clock's (years
/// 0000-9999), so that Go's zero time and absurd dates can be recognised before conversion.
struct rfc3339_instant {
  std::int64_t unix_seconds = 0;  ///< Seconds since 1970-01-01T00:00:00Z; negative before.
  std::uint32_t nanoseconds = 0;  ///< 0-999'999'999; digits beyond the ninth are dropped.

  /// True for Go's zero time.Time, 0001-01-01T00:00:00Z, whatever the offset it was written in.
  bool is_go_zero_time() const noexcept;
};

/// Formats `t` as "YYYY-MM-DDTHH:MM:SS.mmmZ", rounded *up* to the millisecond so the text never
/// names an earlier instant than `t` (rule (c) then errs on the late side). `t` must be in
/// years 1970-9999.
std::string format_rfc3339_ms(std::chrono::system_clock::time_point t);

/// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" ('t' and 'z' accepted too). Rejects
/// impossible dates (Feb 30, hour 24, second 60, offset hour 24) and any other spelling.
std::optional<rfc3339_instant> parse_rfc3339(std::string_view text);

}  // namespace s3lect::inline v1::detail
