// The lock record codec: encoded on every write (acquire, renew, release), decoded on every
// read, and decoded by a peer-mode follower on every answer from the leader.
#include <s3lect/record.hpp>

#include "micro_iterations.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace {

s3lect::lock_record sample_record() {
  s3lect::lock_record record;
  record.leader_id = "api-7.prod.eu-west-1.internal:41234";
  record.leader_addr = "10.0.1.42:8443";
  record.last_updated = std::chrono::system_clock::now();
  record.term = 42;
  record.lease = std::chrono::milliseconds{15000};
  record.nonce = "9f1c2a7e5b3d4c11";
  return record;
}

void BM_record_encode(benchmark::State& state) {
  const s3lect::lock_record record = sample_record();
  for (auto _ : state) benchmark::DoNotOptimize(s3lect::encode_record(record));
  state.counters["bytes"] = static_cast<double>(s3lect::encode_record(record).size());
}
BENCHMARK(BM_record_encode)->Apply(s3lect::bench::fixed_iterations);

void BM_record_decode(benchmark::State& state) {
  const std::string body = s3lect::encode_record(sample_record());
  if (!s3lect::decode_record(body).record) throw std::runtime_error("sample does not decode");
  for (auto _ : state) benchmark::DoNotOptimize(s3lect::decode_record(body));
  state.counters["bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_record_decode)->Apply(s3lect::bench::fixed_iterations);

// A Go writer's record: no term, lease, released flag or nonce.
void BM_record_decode_go(benchmark::State& state) {
  const std::string body =
      R"({"leaderID":"api-7","leaderAddr":"10.0.1.42:8443","lastUpdated":"2026-11-21T10:30:45.123456789Z"})";
  if (!s3lect::decode_record(body).record) throw std::runtime_error("sample does not decode");
  for (auto _ : state) benchmark::DoNotOptimize(s3lect::decode_record(body));
}
BENCHMARK(BM_record_decode_go)->Apply(s3lect::bench::fixed_iterations);

void BM_record_make_nonce(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(s3lect::make_nonce());
}
BENCHMARK(BM_record_make_nonce)->Apply(s3lect::bench::fixed_iterations);

}  // namespace
