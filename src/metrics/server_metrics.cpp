// The counters of s3lect's HTTP servers in the Prometheus text format: what a hostile client
// costs them shows here (docs/peer-mode.md#a-hostile-client).
#include <s3lect/metrics.hpp>

#include "label_text.hpp"

#include <cstdint>
#include <string_view>

namespace s3lect::inline v1 {

namespace {

struct server_series {
  const char* name;
  const char* type;
  const char* help;
  const char* reason;  ///< The `reason` label, or null.
  std::uint64_t server_stats::*field;
};

constexpr server_series series_table[] = {
    {"s3lect_server_connections_accepted_total", "counter",
     "TCP connections accepted, refused ones included.", nullptr,
     &server_stats::accepted_connections},
    {"s3lect_server_connections_refused_total", "counter",
     "Connections closed at once after the accept, by reason.", "max_connections",
     &server_stats::refused_max_connections},
    {"s3lect_server_connections_refused_total", nullptr, nullptr, "per_source",
     &server_stats::refused_per_source},
    {"s3lect_server_connections_refused_total", nullptr, nullptr, "file_descriptors",
     &server_stats::refused_file_descriptors},
    {"s3lect_server_handshake_failures_total", "counter",
     "TLS handshakes that failed or timed out.", nullptr, &server_stats::failed_handshakes},
    {"s3lect_server_first_request_timeouts_total", "counter",
     "Connections closed because no complete request came within the first-request deadline.",
     nullptr, &server_stats::first_request_timeouts},
    {"s3lect_server_requests_total", "counter", "Answers sent.", nullptr, &server_stats::requests},
    {"s3lect_server_connections", "gauge", "Connections open now, watches included.", nullptr,
     &server_stats::active_connections},
    {"s3lect_server_watches", "gauge", "Watches held now.", nullptr, &server_stats::active_watches},
};

void append_sample(std::string& out, const server_series& series, const server_metrics& server) {
  out += series.name;
  out += '{';
  for (const metric_label& label : server.labels) {
    out += label.name + '=';
    append_label_value(out, label.value);
    out += ',';
  }
  out += "server=";
  append_label_value(out, server.server);
  if (series.reason) {
    out += ",reason=";
    append_label_value(out, series.reason);
  }
  out += "} " + std::to_string(server.stats.*series.field) + '\n';
}

}  // namespace

std::string prometheus_text(const std::vector<server_metrics>& servers) {
  std::string out;
  // A family with several reasons lists its rows one after another; only its first row names
  // the type and help.
  for (const server_series& series : series_table) {
    if (series.type) {
      out += std::string("# HELP ") + series.name + ' ' + series.help + '\n';
      out += std::string("# TYPE ") + series.name + ' ' + series.type + '\n';
    }
    for (const server_metrics& server : servers) append_sample(out, series, server);
  }
  return out;
}

}  // namespace s3lect::inline v1
