// The health endpoint's request handling, without the network: health_handler::handle on the
// real elector (leading over memory_store), as the health server calls it for each request.
#include "leading_elector.hpp"

#include <s3lect/health.hpp>

#include "micro_iterations.hpp"

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>

#include <stdexcept>

namespace {

void run_handle(benchmark::State& state, const char* target, unsigned expected_status) {
  boost::asio::io_context io;
  s3lect::bench::leading_elector leader(io);
  s3lect::health_handler handler(io.get_executor(), leader.get().health_source());
  const s3lect::health_request request{"GET", target};
  if (handler.handle(request).status != expected_status)
    throw std::runtime_error("unexpected status from the health handler");
  for (auto _ : state) benchmark::DoNotOptimize(handler.handle(request));
}

void BM_health_handle_leader(benchmark::State& state) {
  run_handle(state, "/health/leadership", 200);
}
BENCHMARK(BM_health_handle_leader)->Apply(s3lect::bench::fixed_iterations);

// A watch request answered at once (handle() never holds): parses the query too.
void BM_health_handle_watch_query(benchmark::State& state) {
  run_handle(state, "/health/leadership?watch=30000&term=1&serial=1", 200);
}
BENCHMARK(BM_health_handle_watch_query)->Apply(s3lect::bench::fixed_iterations);

void BM_health_handle_unknown_path(benchmark::State& state) {
  run_handle(state, "/nope", 404);
}
BENCHMARK(BM_health_handle_unknown_path)->Apply(s3lect::bench::fixed_iterations);

// The snapshot alone: the elector's share of each answer (a lock and a copy of the record).
void BM_health_elector_snapshot(benchmark::State& state) {
  boost::asio::io_context io;
  s3lect::bench::leading_elector leader(io);
  for (auto _ : state) benchmark::DoNotOptimize(leader.get().snapshot());
}
BENCHMARK(BM_health_elector_snapshot)->Apply(s3lect::bench::fixed_iterations);

}  // namespace
