// Metrics of electors in the Prometheus text exposition format (version 0.0.4): what the
// elector counted (elector_counters) and where it stands (leadership_status), one set of series
// per elector, told apart by labels. Serve the text from a health_server
// (health_server_config::metrics), a metrics_server, or your own HTTP server.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/elector.hpp>
#include <s3lect/server_stats.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1 {

/// One label of a series: the name matches [a-zA-Z_][a-zA-Z0-9_]* and does not start with
/// "__"; the value is any UTF-8 text (escaped when rendered).
struct metric_label {
  std::string name;   ///< The label's name.
  std::string value;  ///< Its value.
};

/// What is rendered for one elector, read at one instant.
struct elector_metrics {
  /// Labels of every series of this elector: lock (the lock key) and id (the server id), then
  /// any extra labels given to collect_metrics().
  std::vector<metric_label> labels;
  elector_counters counters;                       ///< What the elector counted.
  bool is_leader = false;                          ///< Whether it leads now.
  std::uint64_t term = 0;                          ///< Its term (held or last seen).
  unsigned consecutive_failures = 0;               ///< Failed election cycles in a row.
  std::optional<store_clock_offset> clock_offset;  ///< Unset before the store's first answer.
  /// The elector's coordination.priority (config, not status: it is what this node claims).
  std::int32_t priority = 0;
  /// While leading: the candidates its endpoint knows (docs/coordination.md), verified by a
  /// client certificate or registration, and not (claims that decide nothing).
  std::uint32_t verified_candidates = 0;
  std::uint32_t unverified_candidates = 0;  ///< Claims not verified, which decide nothing.
};

/// Reads `election`'s counters and status, labelled lock=<lock_key>, id=<server_id> and then
/// `extra_labels` (e.g. {"bucket", "my-bucket"}). Throws boost::system::system_error
/// (errc::invalid_config) when an extra label's name is invalid or repeats another's.
/// Callable from any thread.
elector_metrics collect_metrics(const elector& election,
                                std::vector<metric_label> extra_labels = {});

/// The exposition text of these electors: # HELP and # TYPE once per metric family, then one
/// sample per elector (a histogram: _bucket for every bound and +Inf, _sum, _count). Series:
/// s3lect_s3_requests_total{operation,outcome}, s3lect_peer_checks_total{outcome},
/// s3lect_acquisitions_total, s3lect_renewals_total, s3lect_losses_total,
/// s3lect_demotions_total, s3lect_is_leader, s3lect_term, s3lect_consecutive_failures,
/// s3lect_priority, s3lect_candidates{verified}, s3lect_clock_offset_seconds,
/// s3lect_clock_offset_error_bound_seconds (once measured) and the s3lect_renewal_latency_seconds
/// histogram. docs/metrics.md describes each.
std::string prometheus_text(const std::vector<elector_metrics>& electors);

/// The exposition text of one elector, labelled lock and id.
std::string prometheus_text(const elector& election);

/// What is rendered for one HTTP server (health_server::stats(), metrics_server::stats()).
struct server_metrics {
  /// Labels of every series of this server, e.g. those of its elector; `server` follows them.
  std::vector<metric_label> labels;
  std::string server;  ///< "health", "metrics": the value of the `server` label.
  server_stats stats;  ///< What the server counted.
};

/// The exposition text of these servers' counters: s3lect_server_connections_accepted_total,
/// s3lect_server_connections_refused_total{reason}, s3lect_server_handshake_failures_total,
/// s3lect_server_first_request_timeouts_total, s3lect_server_requests_total,
/// s3lect_server_connections and s3lect_server_watches, each labelled `server`.
/// docs/metrics.md describes each.
std::string prometheus_text(const std::vector<server_metrics>& servers);

/// The Content-Type of the exposition text.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// The electors of a process, rendered together: for a process that runs several electors
/// (different lock keys) behind one /metrics endpoint. Thread-safe.
class metrics_registry {
 public:
  /// Adds `election`'s series, labelled as by collect_metrics(). The elector must stay alive
  /// until removed. Throws boost::system::system_error (errc::invalid_config) for an invalid
  /// extra label, or when another added elector would get the same labels (its series would
  /// collide).
  void add(const elector& election, std::vector<metric_label> extra_labels = {});
  /// Removes `election`'s series; nothing happens when it was not added.
  void remove(const elector& election);
  /// The exposition text of every added elector, in the order they were added.
  std::string render() const;

 private:
  struct entry {
    const elector* election;
    std::vector<metric_label> extra_labels;
  };
  mutable std::mutex mutex_;
  std::vector<entry> entries_;
};

}  // namespace s3lect::inline v1
