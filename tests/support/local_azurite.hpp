// The local Azure Blob server the integration tests run against: Azurite, as described by the
// variables scripts/local-s3/azurite-start.sh writes to /tmp/s3lect-azurite/env. A missing
// variable is a test failure, never a silent skip (support/local_s3.hpp).
#pragma once

#include <s3lect/azure_blob_client.hpp>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace s3lect::test {

/// How to reach the local Azurite.
struct local_azurite {
  std::string endpoint;           ///< S3LECT_AZURE_ENDPOINT_HTTP (…/devstoreaccount1)
  std::string account;            ///< S3LECT_AZURE_ACCOUNT
  std::string key;                ///< S3LECT_AZURE_KEY
  std::string container;          ///< S3LECT_AZURE_CONTAINER
  std::string connection_string;  ///< S3LECT_AZURE_CONNECTION_STRING

  /// Reads the variables; on failure returns nullopt with `problem` naming the missing one.
  static std::optional<local_azurite> from_environment(std::string& problem) {
    local_azurite out;
    const struct {
      const char* name;
      std::string* field;
    } variables[] = {
        {"S3LECT_AZURE_ENDPOINT_HTTP", &out.endpoint},
        {"S3LECT_AZURE_ACCOUNT", &out.account},
        {"S3LECT_AZURE_KEY", &out.key},
        {"S3LECT_AZURE_CONTAINER", &out.container},
        {"S3LECT_AZURE_CONNECTION_STRING", &out.connection_string},
    };
    for (const auto& v : variables) {
      const char* value = std::getenv(v.name);
      if (!value || !*value) {
        problem = std::string(v.name) +
                  " is not set. The Azure integration tests need Azurite: run `source "
                  "$(bash scripts/local-s3/azurite-start.sh)` in the shell that runs ctest.";
        return std::nullopt;
      }
      *v.field = value;
    }
    return out;
  }

  /// A client configuration with the explicit account and key, and a generous timeout.
  azure_blob_config config() const {
    azure_blob_config config;
    config.container = container;
    config.endpoint = endpoint;
    config.account = account;
    config.account_key = key;
    config.request_timeout = std::chrono::seconds(30);
    return config;
  }
};

}  // namespace s3lect::test
