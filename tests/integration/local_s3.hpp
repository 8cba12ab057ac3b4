// The local Ceph RADOS Gateway the integration tests run against, as described by the variables
// scripts/local-s3/start.sh writes to /tmp/s3lect-local-s3/env. A missing variable is a test
// failure, never a silent skip: integration tests that do not run prove nothing.
#pragma once

#include <s3lect/s3_client.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

namespace s3lect::test {

/// How to reach the local store.
struct local_s3 {
  std::string http_endpoint;   ///< S3LECT_TEST_ENDPOINT_HTTP, e.g. http://127.0.0.1:7480
  std::string https_endpoint;  ///< S3LECT_TEST_ENDPOINT_HTTPS, e.g. https://127.0.0.1:7443
  std::string access_key;      ///< S3LECT_TEST_ACCESS_KEY
  std::string secret_key;      ///< S3LECT_TEST_SECRET_KEY
  std::string bucket;          ///< S3LECT_TEST_BUCKET
  std::string region;          ///< S3LECT_TEST_REGION
  std::string ca_file;         ///< S3LECT_TEST_CA_FILE: the CA of the HTTPS endpoint

  /// Reads the variables; on failure returns nullopt and sets `problem` to a message that says
  /// which variable is missing and how to get it.
  static std::optional<local_s3> from_environment(std::string& problem) {
    local_s3 s3;
    const struct {
      const char* name;
      std::string* field;
    } variables[] = {
        {"S3LECT_TEST_ENDPOINT_HTTP", &s3.http_endpoint},
        {"S3LECT_TEST_ENDPOINT_HTTPS", &s3.https_endpoint},
        {"S3LECT_TEST_ACCESS_KEY", &s3.access_key},
        {"S3LECT_TEST_SECRET_KEY", &s3.secret_key},
        {"S3LECT_TEST_BUCKET", &s3.bucket},
        {"S3LECT_TEST_REGION", &s3.region},
        {"S3LECT_TEST_CA_FILE", &s3.ca_file},
    };
    for (const auto& variable : variables) {
      const char* value = std::getenv(variable.name);
      if (!value || !*value) {
        problem = std::string(variable.name) +
                  " is not set. The integration tests need the local S3 server: run "
                  "`bash scripts/local-s3/start.sh && source /tmp/s3lect-local-s3/env` "
                  "in the shell that runs ctest.";
        return std::nullopt;
      }
      *variable.field = value;
    }
    return s3;
  }

  /// A client configuration for the HTTP or the HTTPS endpoint, with a generous timeout (the
  /// store's first write to a fresh pool takes seconds).
  s3_config config(bool https) const {
    s3_config config;
    config.bucket = bucket;
    config.endpoint = https ? https_endpoint : http_endpoint;
    config.region = region;
    config.creds.access_key_id = access_key;
    config.creds.secret_access_key = secret_key;
    config.tls.ca_file = ca_file;
    config.request_timeout = std::chrono::seconds(30);
    return config;
  }
};

/// A random suffix so that keys of one test run never collide with an earlier run's.
inline std::string unique_suffix() {
  static const std::string run = [] {
    std::random_device device;
    std::mt19937_64 generator(device());
    const std::uint64_t value = generator();
    static constexpr char digits[] = "0123456789abcdef";
    std::string text;
    for (int shift = 60; shift >= 0; shift -= 4) text += digits[(value >> shift) & 0xf];
    return text;
  }();
  static std::atomic<int> counter{0};
  return run + "-" + std::to_string(counter++);
}

}  // namespace s3lect::test
