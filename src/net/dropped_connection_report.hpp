// The log of connections an http_server dropped (refused at once, timed out before their first
// request, failed handshakes), rate-limited: one line at most per interval, with the counts
// since the last line. An attack of thousands of connections a second then costs a line every
// few seconds instead of one per connection, and a single refusal is still logged at once.
// Sans-I/O: the server passes "now" and arms a timer for flush_at().
#pragma once

#include "connection_admission.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace s3lect::inline v1::detail {

enum class dropped_kind {
  refused_max_connections,
  refused_per_source,
  refused_file_descriptors,
  first_request_timeout,
  failed_handshake,
};

dropped_kind dropped_kind_of(refusal_reason reason);

/// What was dropped over one interval.
struct dropped_counts {
  std::array<std::uint64_t, 5> counts{};
  std::string last_source;  ///< The address of the last dropped connection.
  std::chrono::milliseconds interval{0};

  /// True when a connection was refused (not only a slow or failed client).
  bool refusals() const;
  /// "refused_max_connections=0 refused_per_source=12 ... last_source=127.0.0.2".
  std::string describe() const;
};

class dropped_connection_report {
 public:
  using clock = std::chrono::steady_clock;

  explicit dropped_connection_report(std::chrono::milliseconds interval) : interval_(interval) {}

  /// Counts a dropped connection. Returns the counts to log now when no line was logged within
  /// the interval, else holds them until flush_at().
  std::optional<dropped_counts> count(dropped_kind kind, std::string source, clock::time_point now);
  /// The held counts once flush_at() has come (or `force`, for a stop), else nullopt.
  std::optional<dropped_counts> flush(clock::time_point now, bool force = false);
  /// When the held counts are due; nullopt when nothing is held.
  std::optional<clock::time_point> flush_at() const;

 private:
  dropped_counts take(clock::time_point now);

  const std::chrono::milliseconds interval_;
  dropped_counts held_;
  bool holding_ = false;
  std::optional<clock::time_point> last_line_;
};

}  // namespace s3lect::inline v1::detail
