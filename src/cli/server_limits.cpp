#include "cli/server_limits.hpp"

#include <s3lect/file_descriptors.hpp>

#include <string>

namespace s3lect::cli {

void check_file_descriptors(const serve_settings& serve, const log_output& output) {
  std::uint64_t needed = reserved_file_descriptors;
  if (serve.peer_server) {
    needed += serve.peer_server->max_connections + serve.peer_server->handler.max_watchers + 1;
  }
  if (serve.metrics_listen) needed += metrics_server_config{}.max_connections + 1;
  const file_descriptor_limit limit = ensure_file_descriptors(needed);
  const std::vector<log_field> fields = {
      {"soft", limit.soft}, {"hard", limit.hard}, {"needed", needed}};
  if (!limit.enough()) {
    output.log(log_level::warning,
               "file descriptor limit (ulimit -n) below what the servers may hold: connections "
               "beyond it are refused to keep descriptors for the store; raise the hard limit "
               "(e.g. LimitNOFILE= in a systemd unit)",
               fields);
  } else if (limit.raised) {
    output.log(log_level::info, "raised the file descriptor limit", fields);
  }
}

std::vector<server_metrics> servers_metrics(const health_server* peer,
                                            const metrics_server* metrics,
                                            const std::vector<metric_label>& labels) {
  std::vector<server_metrics> servers;
  if (peer) servers.push_back(server_metrics{labels, "health", peer->stats()});
  if (metrics) servers.push_back(server_metrics{labels, "metrics", metrics->stats()});
  return servers;
}

}  // namespace s3lect::cli
