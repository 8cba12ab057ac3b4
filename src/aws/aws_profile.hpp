// The AWS shared configuration files (~/.aws/credentials and ~/.aws/config): a sans-I/O INI
// parser with the AWS rules, profile lookup across both files, and the profile provider.
#pragma once

#include "credentials_detail.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::inline v1::detail {

/// One parsed INI file: sections as written between the brackets (trimmed), property names in
/// lower case, values trimmed and without trailing comments. Indented lines under an empty
/// property become "parent.child" properties (the config file's nested `s3 =` settings);
/// other indented lines continue the previous value.
using ini_section = std::map<std::string, std::string, std::less<>>;

struct ini_file {
  std::map<std::string, ini_section, std::less<>> sections;
  /// "line N: problem" for each line that was skipped. Never quotes the line: it may be a key.
  std::vector<std::string> problems;
};

/// Parses `text`; never throws on bad input (only bad_alloc).
ini_file parse_ini(std::string_view text);

/// The shared files' paths: AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE, else
/// ~/.aws/credentials and ~/.aws/config; a leading "~/" is HOME. Empty when HOME is needed and
/// unset.
struct shared_file_paths {
  std::string credentials_file;
  std::string config_file;
};
shared_file_paths locate_shared_files(const environment_snapshot& env);

/// The profile to use: `configured` when not empty, else AWS_PROFILE, else "default".
std::string selected_profile(std::string_view configured, const environment_snapshot& env);

/// One profile's properties, merged from both files.
struct profile_lookup {
  bool found = false;  ///< the profile has a section in either file
  /// The config file's `[profile NAME]` (or `[default]`), overridden property by property by the
  /// credentials file's `[NAME]`.
  ini_section properties;
  /// Parse problems of both files, "FILE line N: problem".
  std::vector<std::string> problems;
};

/// Looks `profile` up; a file that is nullopt does not exist.
profile_lookup find_profile(const std::optional<std::string>& credentials_text,
                            std::string_view credentials_path,
                            const std::optional<std::string>& config_text,
                            std::string_view config_path, std::string_view profile);

/// What a profile says about credentials.
struct profile_credentials {
  enum class kind {
    none,          ///< no credential settings (a region-only profile): not configured
    static_keys,   ///< aws_access_key_id + aws_secret_access_key [+ aws_session_token]
    web_identity,  ///< role_arn + web_identity_token_file [+ role_session_name]
    invalid,       ///< incomplete or unsupported: `error` and `message` say what
  };
  kind type = kind::none;
  aws_credentials credentials;                           ///< static_keys
  std::string role_arn;                                  ///< web_identity
  std::string token_file;                                ///< web_identity
  std::string session_name;                              ///< web_identity; may be empty
  credentials_errc error = credentials_errc::malformed;  ///< invalid
  std::string message;                                   ///< invalid: "profile NAME: problem"
};

/// Interprets the properties of the profile `name` (static keys, web identity, or a feature
/// s3lect does not implement: assume role with source_profile or credential_source, SSO,
/// credential_process).
profile_credentials interpret_profile(const ini_section& properties, std::string_view name);

/// The region of the selected profile in the config file ("" when none), the way the SDKs
/// resolve it after AWS_REGION and AWS_DEFAULT_REGION. Reads the file; never throws.
std::string profile_region(const environment_snapshot& env, std::string_view profile = {});

/// Settings of the profile provider.
struct profile_provider_settings {
  std::string profile;  ///< empty: AWS_PROFILE, else "default"
  environment_snapshot env;
  std::string sts_region;  ///< for profiles using web identity
  std::chrono::milliseconds http_timeout{2000};
};

/// Reads the shared files at every fetch. Not configured when the files or the default profile
/// are absent or the profile has no credential settings; a profile named explicitly (setting or
/// AWS_PROFILE) that does not exist is an error. Provider name "profile NAME".
std::shared_ptr<coroutine_provider> make_profile_provider(boost::asio::any_io_executor executor,
                                                          profile_provider_settings settings);

}  // namespace s3lect::inline v1::detail
