// Counters of s3lect's HTTP servers (health_server, metrics_server): what they accepted, what
// they refused and why, and what they dropped. Rendered as Prometheus series by
// prometheus_text(std::vector<server_metrics>) (metrics.hpp); docs/metrics.md describes each.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <cstdint>

namespace s3lect::inline v1 {

/// A snapshot of one server's counters; every field but the last two only grows.
struct server_stats {
  std::uint64_t accepted_connections = 0;  ///< Every accepted TCP connection, refused ones too.
  /// Closed at once, whatever the reason: the sum of the three refused_* fields.
  std::uint64_t rejected_connections = 0;
  std::uint64_t refused_max_connections = 0;   ///< max_connections reached.
  std::uint64_t refused_per_source = 0;        ///< max_connections_per_source reached.
  std::uint64_t refused_file_descriptors = 0;  ///< Too few file descriptors left (RLIMIT_NOFILE).
  std::uint64_t failed_handshakes = 0;         ///< TLS handshakes that failed or timed out.
  /// Connections closed because no complete request came within first_request_timeout
  /// (handshake included).
  std::uint64_t first_request_timeouts = 0;
  std::uint64_t requests = 0;  ///< Answers sent (counted as the write starts), 400/431 included.
  std::uint64_t active_connections = 0;  ///< Open now, watches included.
  std::uint64_t active_watches = 0;      ///< Connections holding a watch now.
};

}  // namespace s3lect::inline v1
