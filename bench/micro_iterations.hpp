// Fixed iteration counts for instruction counting under callgrind (bench/micro.sh --callgrind):
// with S3LECT_BENCH_ITERATIONS=N every benchmark runs exactly N iterations, once, so that the
// instructions callgrind counts inside it divide by N. Unset: Google Benchmark's own timing.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace s3lect::bench {

inline void fixed_iterations(benchmark::internal::Benchmark* b) {
  if (const char* n = std::getenv("S3LECT_BENCH_ITERATIONS")) b->Iterations(std::atoll(n));
}

}  // namespace s3lect::bench
