// The local stores the integration tests run against: the Ceph RADOS Gateway, as described by the
// variables scripts/local-s3/start.sh writes to /tmp/s3lect-local-s3/env, and moto, the second
// store, by those of scripts/local-s3/moto-start.sh in /tmp/s3lect-moto/env. A missing variable
// is a test failure, never a silent skip: integration tests that do not run prove nothing.
#pragma once

#include <s3lect/s3_client.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <random>
#include <string>

namespace s3lect::test {

/// The local stores. RGW is the store of record; moto answers as AWS does where RGW does not
/// (quoted ETags, 404 NoSuchKey for If-Match on a missing key) and checks no signature.
/// Azurite is no S3 store: the tests that run on every storage take it through
/// support/local_azurite.hpp.
enum class local_store { rgw, moto, azurite };

/// The store's name in test names and messages.
inline const char* store_name(local_store store) {
  switch (store) {
    case local_store::rgw:
      return "rgw";
    case local_store::moto:
      return "moto";
    default:
      return "azurite";
  }
}

/// How to reach the local store.
struct local_s3 {
  local_store store = local_store::rgw;
  std::string http_endpoint;   ///< S3LECT_TEST_ENDPOINT_HTTP, e.g. http://127.0.0.1:7480
  std::string https_endpoint;  ///< S3LECT_TEST_ENDPOINT_HTTPS, e.g. https://127.0.0.1:7443
  std::string access_key;      ///< S3LECT_TEST_ACCESS_KEY
  std::string secret_key;      ///< S3LECT_TEST_SECRET_KEY
  std::string bucket;          ///< S3LECT_TEST_BUCKET
  std::string region;          ///< S3LECT_TEST_REGION
  std::string ca_file;         ///< S3LECT_TEST_CA_FILE: the CA of the HTTPS endpoint

  /// Reads the RGW's variables; on failure returns nullopt and sets `problem` to a message that
  /// says which variable is missing and how to get it.
  static std::optional<local_s3> from_environment(std::string& problem) {
    return from_environment(local_store::rgw, problem);
  }

  /// Reads the variables of `store`, as above. moto has no HTTPS endpoint and no CA.
  static std::optional<local_s3> from_environment(local_store store, std::string& problem) {
    if (store == local_store::azurite) {
      problem = "Azurite is not an S3 store: use support/local_azurite.hpp";
      return std::nullopt;
    }
    return store == local_store::rgw ? read_rgw(problem) : read_moto(problem);
  }

  /// Whether the store has an HTTPS endpoint.
  bool has_https() const { return !https_endpoint.empty(); }

 private:
  struct variable {
    const char* name;
    std::string* field;
  };

  static bool read(const variable* begin, const variable* end, const char* start_command,
                   std::string& problem) {
    for (const auto* v = begin; v != end; ++v) {
      const char* value = std::getenv(v->name);
      if (!value || !*value) {
        problem = std::string(v->name) + " is not set. The integration tests need the local " +
                  "S3 servers: run `" + start_command + "` in the shell that runs ctest.";
        return false;
      }
      *v->field = value;
    }
    return true;
  }

  static std::optional<local_s3> read_moto(std::string& problem) {
    local_s3 s3;
    s3.store = local_store::moto;
    const variable variables[] = {
        {"S3LECT_MOTO_ENDPOINT_HTTP", &s3.http_endpoint},
        {"S3LECT_MOTO_ACCESS_KEY", &s3.access_key},
        {"S3LECT_MOTO_SECRET_KEY", &s3.secret_key},
        {"S3LECT_MOTO_BUCKET", &s3.bucket},
        {"S3LECT_MOTO_REGION", &s3.region},
    };
    if (!read(std::begin(variables), std::end(variables),
              "source $(bash scripts/local-s3/moto-start.sh)", problem))
      return std::nullopt;
    return s3;
  }

  static std::optional<local_s3> read_rgw(std::string& problem) {
    local_s3 s3;
    const variable variables[] = {
        {"S3LECT_TEST_ENDPOINT_HTTP", &s3.http_endpoint},
        {"S3LECT_TEST_ENDPOINT_HTTPS", &s3.https_endpoint},
        {"S3LECT_TEST_ACCESS_KEY", &s3.access_key},
        {"S3LECT_TEST_SECRET_KEY", &s3.secret_key},
        {"S3LECT_TEST_BUCKET", &s3.bucket},
        {"S3LECT_TEST_REGION", &s3.region},
        {"S3LECT_TEST_CA_FILE", &s3.ca_file},
    };
    if (!read(std::begin(variables), std::end(variables),
              "bash scripts/local-s3/start.sh && source /tmp/s3lect-local-s3/env", problem))
      return std::nullopt;
    return s3;
  }

 public:
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

/// Which store a parametrised test runs against, and over which transport.
struct store_transport {
  local_store store;
  bool https;
};

/// The parameter's name in test names: rgw_http, rgw_https, moto_http.
inline std::string store_transport_name(const store_transport& param) {
  return std::string(store_name(param.store)) + (param.https ? "_https" : "_http");
}

/// Every store and transport the store-generic tests run on (moto has no HTTPS endpoint).
inline constexpr store_transport every_store_transport[] = {
    {local_store::rgw, false}, {local_store::rgw, true}, {local_store::moto, false}};

/// Every store the storage-generic tests (the elector's) run on: the S3 stores and Azurite.
inline constexpr store_transport every_storage_transport[] = {{local_store::rgw, false},
                                                              {local_store::rgw, true},
                                                              {local_store::moto, false},
                                                              {local_store::azurite, false}};

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
