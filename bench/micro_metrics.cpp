// Prometheus text rendering (metrics.hpp): what every scrape of /metrics costs, for one elector
// and for a process running many electors (a metrics_registry of 100).
#include <s3lect/metrics.hpp>

#include "micro_iterations.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

/// An elector's metrics after some hours of work: every counter and histogram bucket non-zero.
s3lect::elector_metrics sample_metrics(int index) {
  s3lect::elector_metrics metrics;
  metrics.labels = {{"lock", "leader/group-" + std::to_string(index) + ".json"},
                    {"id", "api-7.prod.eu-west-1.internal:" + std::to_string(41234 + index)}};
  auto fill = [](s3lect::request_counts& counts, std::uint64_t base) {
    counts.ok = base * 1000;
    counts.not_found = base;
    counts.precondition_failed = base * 3;
    counts.failed = base * 2;
  };
  fill(metrics.counters.s3_get, 7);
  fill(metrics.counters.s3_put, 11);
  fill(metrics.counters.peer_check, 5);
  metrics.counters.acquisitions = 4;
  metrics.counters.renewals = 12345;
  metrics.counters.losses = 3;
  metrics.counters.demotions = 1;
  for (std::size_t i = 0; i < metrics.counters.renewal_latency.counts.size(); ++i)
    metrics.counters.renewal_latency.counts[i] = 100 * (i + 1);
  metrics.counters.renewal_latency.count = 7800;
  metrics.counters.renewal_latency.sum = std::chrono::microseconds{123456789};
  metrics.is_leader = true;
  metrics.term = 42;
  return metrics;
}

void BM_prometheus_text(benchmark::State& state) {
  std::vector<s3lect::elector_metrics> electors;
  for (int i = 0; i < state.range(0); ++i) electors.push_back(sample_metrics(i));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = s3lect::prometheus_text(electors);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["electors"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_prometheus_text)->Arg(1)->Arg(100)->Apply(s3lect::bench::fixed_iterations);

}  // namespace
