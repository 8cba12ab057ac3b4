// What one elector did since it was constructed: requests by outcome, leadership changes and
// the renewal latency, for tests, benchmarks and metrics (metrics.hpp renders them).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <array>
#include <chrono>
#include <cstdint>

namespace s3lect::inline v1 {

/// Attempts of one kind of request, by how they ended.
struct request_counts {
  std::uint64_t ok = 0;                   ///< Completed with success.
  std::uint64_t not_found = 0;            ///< GET of a missing key.
  std::uint64_t precondition_failed = 0;  ///< PUT refused by its condition (412, or 404/409).
  std::uint64_t failed = 0;               ///< Any other error, timeouts included.
  /// Every attempt, whatever its end.
  std::uint64_t total() const noexcept { return ok + not_found + precondition_failed + failed; }
};

/// A latency distribution with fixed bucket bounds, as Prometheus histograms want it.
struct latency_histogram {
  /// Upper bounds of the buckets in milliseconds; a last, unbounded bucket follows.
  static constexpr std::array<std::int64_t, 12> bounds_ms{5,   10,   25,   50,   100,   250,
                                                          500, 1000, 2500, 5000, 10000, 30000};
  /// counts[i]: observations ≤ bounds_ms[i] and > bounds_ms[i - 1]; counts.back(): the rest.
  std::array<std::uint64_t, bounds_ms.size() + 1> counts{};
  std::uint64_t count = 0;           ///< Observations in all.
  std::chrono::microseconds sum{0};  ///< Their sum.

  /// Adds one observation to its bucket, count and sum.
  void observe(std::chrono::microseconds latency) noexcept;
};

/// What one elector did since it was constructed, for tests, benchmarks and metrics. Requests
/// count every attempt, retries included.
struct elector_counters {
  request_counts s3_get;  ///< GET attempts of the lock record.
  request_counts s3_put;  ///< Conditional PUT attempts (acquire, renew, release).
  /// Peer-mode health checks: ok = the leader answered, not_found = "not leader" (404).
  request_counts peer_check;
  std::uint64_t acquisitions = 0;  ///< Leaderships gained (reported).
  std::uint64_t renewals = 0;      ///< Successful renewals.
  std::uint64_t losses = 0;        ///< Leaderships lost, whatever the reason.
  std::uint64_t demotions = 0;     ///< Losses because no renewal succeeded by the deadline.
  /// Successful renewals, from sending the first attempt to its success.
  latency_histogram renewal_latency;

  /// GETs and PUTs of the lock record together.
  std::uint64_t s3_requests() const noexcept { return s3_get.total() + s3_put.total(); }
};

}  // namespace s3lect::inline v1
