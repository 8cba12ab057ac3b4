// What `s3lect run`'s servers need from the process and report to /metrics: the file
// descriptors they may hold (checked against RLIMIT_NOFILE before listening) and their
// counters beside the elector's series.
#pragma once

#include "cli/log_output.hpp"
#include "cli/serve_options.hpp"

#include <s3lect/health.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>

#include <vector>

namespace s3lect::cli {

/// Raises the soft RLIMIT_NOFILE to what these servers may hold plus
/// reserved_file_descriptors when the hard limit allows, and logs a warning saying what to do
/// when it does not (the servers then refuse connections rather than starve the S3 client).
void check_file_descriptors(const serve_settings& serve, const log_output& output);

/// The counters of the servers that run (either may be null), labelled `labels` and `server`.
std::vector<server_metrics> servers_metrics(const health_server* peer,
                                            const metrics_server* metrics,
                                            const std::vector<metric_label>& labels);

}  // namespace s3lect::cli
