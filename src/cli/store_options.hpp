// The options every subcommand uses to reach the lock: --lock, --endpoint, --region,
// --ca-file, --path-style, --request-timeout, turned into an s3_config (s3://BUCKET/KEY) or an
// azure_blob_config (az://CONTAINER/BLOB).
#pragma once

#include "cli/options.hpp"

#include <s3lect/azure_blob_client.hpp>
#include <s3lect/s3_client.hpp>

#include <chrono>

#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Flag names of the store options (no value).
const std::vector<std::string>& store_flag_names();
/// Valued option names of the store options.
const std::vector<std::string>& store_valued_names();
/// Help text of the store options, --request-timeout included (default 5s).
const char* store_options_help();
/// Help text of the store options without --request-timeout, for subcommands that document
/// their own default for it.
const char* store_location_help();

/// The store configuration and lock key from parsed options plus the AWS environment (s3://)
/// or the Azure SDKs' variables (az://).
struct store_target {
  s3_config config;                        ///< s3://: the S3 client's configuration.
  std::optional<azure_blob_config> azure;  ///< az://: the Azure client's, set instead.
  std::string key;

  /// True for az://CONTAINER/BLOB.
  bool is_azure() const noexcept { return azure.has_value(); }
  /// The lock as s3://BUCKET/KEY or az://CONTAINER/BLOB.
  std::string url() const;
  /// The bucket, or the container.
  const std::string& bucket() const noexcept;
  /// The endpoint URL requests go to.
  const std::string& endpoint() const noexcept;
  /// Whether the store's answers are authenticated (storage::answers_authenticated()).
  bool answers_authenticated() const;
  /// The client's bound on one request attempt.
  std::chrono::milliseconds request_timeout() const noexcept;
  void set_request_timeout(std::chrono::milliseconds timeout) noexcept;
};

/// The option names a store command accepts: the store options, --help and the extras.
struct store_command_names {
  std::vector<std::string> flags;
  std::vector<std::string> valued;
};
store_command_names store_command_option_names(const std::vector<std::string>& extra_flags,
                                               const std::vector<std::string>& extra_valued);

/// Parses the arguments of a subcommand that reads or writes the lock: the store options,
/// --help, `extra_valued` options and `extra_flags`, with no positional argument and nothing
/// after `--`. Returns nullopt and sets `error` on a problem; arguments with --help are returned
/// as parsed, whatever else is wrong with them.
std::optional<parsed_args> parse_store_command(const std::vector<std::string>& args,
                                               const std::vector<std::string>& extra_valued,
                                               std::string& error,
                                               const std::vector<std::string>& extra_flags = {});

/// Builds the target; returns nullopt and sets `error` when an option is missing or invalid.
std::optional<store_target> make_store_target(const parsed_args& args, std::string& error);

}  // namespace s3lect::cli
