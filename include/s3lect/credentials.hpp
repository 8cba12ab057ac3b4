// AWS credentials and where they come from: the standard provider chain of the AWS SDKs and CLI
// (environment, web identity, shared profile files, container endpoint, EC2 instance metadata),
// fetched asynchronously on the caller's executor. No Beast, OpenSSL or Boost.JSON here.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/logger.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace s3lect::inline v1 {

/// An AWS access key pair, an optional session token, and what supplied them.
struct aws_credentials {
  std::string access_key_id;      ///< The key id; an identifier, not a secret (CloudTrail logs it).
  std::string secret_access_key;  ///< Never logged and never put in an error message.
  std::string session_token;      ///< Sent as x-amz-security-token when not empty.
  /// When temporary credentials stop working; nullopt for long-term keys.
  std::optional<std::chrono::system_clock::time_point> expiration;
  /// What supplied them: "explicit", "environment", "web-identity", "profile NAME",
  /// "container", "imds", or a custom provider's name. Empty in s3_config::creds means
  /// "explicit" (apply_environment() sets "environment" when it fills them).
  std::string provider;
};

/// Why credentials could not be had. Compare with `ec == s3lect::credentials_errc::x`.
enum class credentials_errc {
  /// This provider does not apply here (its variables or files are absent); a chain moves on.
  not_configured = 1,
  /// No provider of the chain applied; the message lists what each one found missing.
  no_credentials,
  /// The provider applies but could not deliver: endpoint unreachable, refused, timed out.
  fetch_failed,
  /// The provider's answer or file could not be understood, or lacks a field.
  malformed,
  /// The configuration asks for something s3lect does not implement (SSO, credential_process,
  /// assume-role chains); the message names it.
  unsupported,
};

/// The category of s3lect::credentials_errc.
const boost::system::error_category& credentials_category() noexcept;

/// Makes an error_code from a credentials_errc (found by argument-dependent lookup).
inline boost::system::error_code make_error_code(credentials_errc e) noexcept {
  return {static_cast<int>(e), credentials_category()};
}

/// What a fetch produced.
struct credentials_result {
  aws_credentials credentials;  ///< Valid when the error_code is empty.
  /// On failure "provider: what went wrong" (never a secret or token); empty on success.
  std::string message;
};

/// Completion signature of credentials_provider::async_fetch.
using credentials_signature = void(boost::system::error_code, credentials_result);

/// A source of AWS credentials. Thread-safe. Fetches are not cached: wrap a provider in an
/// s3_client (which caches and refreshes ahead of expiry) rather than fetching per request.
class credentials_provider {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  virtual ~credentials_provider() = default;

  /// Short name for logs and errors, e.g. "imds" or "default chain".
  virtual std::string name() const = 0;

  /// Fetches credentials. Completes with `void(error_code, credentials_result)`: a
  /// credentials_errc (or another error a custom provider chooses) and a message on failure.
  /// Reads local files synchronously (they are small); network fetches are bounded by the
  /// provider's timeout. Cancellation: not supported; the fetch ends within that timeout.
  template <class CompletionToken = default_token>
  auto async_fetch(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, credentials_signature>(initiate_fetch{this},
                                                                               token);
  }

 protected:
  /// Starts a fetch; must complete `handler` exactly once and never inside this call.
  virtual void fetch_impl(boost::asio::any_completion_handler<credentials_signature> handler) = 0;

 private:
  struct initiate_fetch {
    credentials_provider* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->fetch_impl(boost::asio::any_completion_handler<credentials_signature>(
          std::forward<Handler>(handler)));
    }
  };
};

/// A provider that always completes with `credentials` (its `provider` field defaults to
/// "explicit"), after a post to `executor`.
std::shared_ptr<credentials_provider> make_static_credentials_provider(
    boost::asio::any_io_executor executor, aws_credentials credentials);

/// Settings of the default chain. Environment variables are read when the chain is made;
/// profile and token files each time a provider fetches (tokens rotate).
struct credentials_chain_options {
  /// Profile of the shared files; empty: AWS_PROFILE, else "default".
  std::string profile;
  /// Region for the regional STS endpoint; empty: AWS_REGION, AWS_DEFAULT_REGION, else the
  /// global https://sts.amazonaws.com.
  std::string region;
  /// Bound on each HTTP exchange with IMDS, the container endpoint or STS.
  std::chrono::milliseconds http_timeout{2000};
  /// Lifetime asked for IMDSv2 session tokens (1 s to 6 h); they are reused until then.
  std::chrono::seconds imds_token_ttl{21600};
  logger log;  ///< Where the providers of the chain log.
};

/// The standard chain, in order, stopping at the first provider that applies:
/// 1. environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [, AWS_SESSION_TOKEN];
/// 2. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME]
///    through STS AssumeRoleWithWebIdentity at AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, or the
///    regional STS endpoint;
/// 3. shared files: AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
///    (~/.aws/config), profile `options.profile`; static keys and session tokens, or
///    role_arn + web_identity_token_file;
/// 4. container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI, with
///    AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or AWS_CONTAINER_AUTHORIZATION_TOKEN (ECS, EKS Pod
///    Identity);
/// 5. EC2 instance metadata, IMDSv2 only, at AWS_EC2_METADATA_SERVICE_ENDPOINT (default
///    http://169.254.169.254); skipped when AWS_EC2_METADATA_DISABLED=true.
/// A provider that applies but fails ends the chain with its error: a broken configuration is
/// reported, not silently replaced by another identity. When none applies the chain completes
/// with credentials_errc::no_credentials and a message listing what each one looked for.
std::shared_ptr<credentials_provider> make_default_credentials_chain(
    boost::asio::any_io_executor executor, credentials_chain_options options = {});

/// Which provider supplied the credentials an s3_client signs with; never the secret.
struct credentials_origin {
  std::string provider;       ///< See aws_credentials::provider; empty before the first fetch.
  std::string access_key_id;  ///< An identifier, not a secret (CloudTrail logs it).
  std::optional<std::chrono::system_clock::time_point> expiration;  ///< nullopt: long-term.
};

}  // namespace s3lect::inline v1

// Boost.System's trait, not this library's API: left out of the reference.
/// \cond
template <>
struct boost::system::is_error_code_enum<s3lect::credentials_errc> : std::true_type {};
/// \endcond
