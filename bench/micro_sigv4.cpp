// SigV4 signing cost per request: what the S3 client does before every GET and PUT (hash the
// body, build the canonical request, derive the signing key, HMAC the string to sign).
#include "sigv4.hpp"

#include "micro_iterations.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace {

using namespace s3lect::detail;

const sigv4_key key{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};

/// The headers the S3 client signs (src/s3_client.cpp): host, x-amz-date, x-amz-content-sha256,
/// plus the condition and content type on a PUT.
sigv4_request lock_request(const std::string& method, const std::string& amz_date,
                           const std::string& payload_hash) {
  sigv4_request request;
  request.method = method;
  request.canonical_uri = s3_object_path("my-bucket", "leader/my-group.json");
  request.headers = {{"host", "s3.us-east-1.amazonaws.com"},
                     {"x-amz-date", amz_date},
                     {"x-amz-content-sha256", payload_hash}};
  if (method == "PUT") {
    request.headers.emplace_back("if-match", "9b2cf535f27731c974343645a3985328");
    request.headers.emplace_back("content-type", "application/json");
  }
  request.payload_hash = payload_hash;
  return request;
}

/// A lock record padded to exactly `size` bytes, the body a PUT carries (300 in the table).
std::string record_body(std::size_t size) {
  std::string body =
      R"({"leaderID":"api-7.prod.eu-west-1.internal:41234","leaderAddr":"10.0.1.42:8443",)"
      R"("lastUpdated":"2026-11-21T10:30:45.123Z","term":42,"leaseMs":15000,"released":false,)"
      R"("nonce":"9f1c2a7e5b3d4c11","pad":")";
  body.resize(size - 2, 'x');
  return body + "\"}";
}
const std::string body_300 = record_body(300);

/// Everything the client does per request: format the date, hash the body, sign.
void BM_sigv4_sign_get(benchmark::State& state) {
  const sigv4_scope scope{format_amz_date(std::chrono::system_clock::now()), "us-east-1", "s3"};
  for (auto _ : state) {
    const std::string payload_hash = sha256_hex("");
    const sigv4_request request = lock_request("GET", scope.amz_date, payload_hash);
    benchmark::DoNotOptimize(authorization_header(key, scope, request));
  }
}
BENCHMARK(BM_sigv4_sign_get)->Apply(s3lect::bench::fixed_iterations);

void BM_sigv4_sign_put_300B(benchmark::State& state) {
  const sigv4_scope scope{format_amz_date(std::chrono::system_clock::now()), "us-east-1", "s3"};
  for (auto _ : state) {
    const std::string payload_hash = sha256_hex(body_300);
    const sigv4_request request = lock_request("PUT", scope.amz_date, payload_hash);
    benchmark::DoNotOptimize(authorization_header(key, scope, request));
  }
  state.counters["body_bytes"] = static_cast<double>(body_300.size());
}
BENCHMARK(BM_sigv4_sign_put_300B)->Apply(s3lect::bench::fixed_iterations);

// The parts, to see where a signature's time goes.
void BM_sigv4_sha256_300B(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(sha256_hex(body_300));
}
BENCHMARK(BM_sigv4_sha256_300B)->Apply(s3lect::bench::fixed_iterations);

void BM_sigv4_hmac_sha256(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(hmac_sha256(key.secret_access_key, "20261121"));
}
BENCHMARK(BM_sigv4_hmac_sha256)->Apply(s3lect::bench::fixed_iterations);

void BM_sigv4_canonical_request_put(benchmark::State& state) {
  const std::string payload_hash = sha256_hex(body_300);
  const sigv4_request request = lock_request("PUT", "20261121T103045Z", payload_hash);
  for (auto _ : state) benchmark::DoNotOptimize(canonical_request(request));
}
BENCHMARK(BM_sigv4_canonical_request_put)->Apply(s3lect::bench::fixed_iterations);

}  // namespace
