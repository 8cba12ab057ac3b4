// Microsoft Entra ID bearer tokens for azure_blob_client: a token source, and the two ways a
// workload on Azure gets one without a secret in its configuration (AKS workload identity and
// managed identity), fetched asynchronously on the caller's executor. No Beast, OpenSSL or
// Boost.JSON here.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/credentials.hpp>
#include <s3lect/tls.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace s3lect::inline v1 {

/// An OAuth 2.0 access token for Azure Storage (audience https://storage.azure.com/), or why
/// there is none.
struct azure_token {
  std::string access_token;  ///< Sent as `Authorization: Bearer`; never logged.
  /// When the token stops working; nullopt: it never expires (a custom provider's choice).
  std::optional<std::chrono::system_clock::time_point> expires;
  /// What supplied it: "workload-identity", "managed-identity" (IMDS or App Service), or a
  /// custom provider's name.
  std::string provider;
  /// On failure "provider: what went wrong" (never a token or an assertion); empty on success.
  std::string message;
};

/// Completion signature of azure_token_provider::async_fetch.
using azure_token_signature = void(boost::system::error_code, azure_token);

/// A source of Entra ID tokens for Azure Storage. Thread-safe. Fetches are not cached: give a
/// provider to azure_blob_config::token_provider (the client caches and refreshes ahead of
/// expiry) rather than fetching per request.
class azure_token_provider {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  virtual ~azure_token_provider() = default;

  /// Short name for logs and errors, e.g. "workload-identity".
  virtual std::string name() const = 0;

  /// Fetches a token. Completes with `void(error_code, azure_token)`: a credentials_errc (or
  /// another error a custom provider chooses) and `message` on failure. Reads the federated token
  /// file synchronously (it is small); network fetches are bounded by the provider's timeout.
  /// Cancellation: not supported; the fetch ends within that timeout.
  template <class CompletionToken = default_token>
  auto async_fetch(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, azure_token_signature>(initiate_fetch{this},
                                                                               token);
  }

 protected:
  /// Starts a fetch; must complete `handler` exactly once and never inside this call.
  virtual void fetch_impl(boost::asio::any_completion_handler<azure_token_signature> handler) = 0;

 private:
  struct initiate_fetch {
    azure_token_provider* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->fetch_impl(boost::asio::any_completion_handler<azure_token_signature>(
          std::forward<Handler>(handler)));
    }
  };
};

/// AKS workload identity (Microsoft Entra Workload ID): the Kubernetes service account token in
/// `token_file` is exchanged for an access token by the OAuth 2.0 client credentials grant with a
/// federated client assertion.
struct azure_workload_identity_options {
  std::string token_file;  ///< AZURE_FEDERATED_TOKEN_FILE; re-read at every fetch (it rotates).
  std::string client_id;   ///< AZURE_CLIENT_ID: the application (client) id.
  std::string tenant_id;   ///< AZURE_TENANT_ID.
  /// AZURE_AUTHORITY_HOST; empty: https://login.microsoftonline.com/ (the public cloud).
  std::string authority_host;
  std::chrono::milliseconds http_timeout{5000};  ///< Bound on one token request.
  tls_config tls;                                ///< TLS to the authority.

  /// The options from the variables AKS injects into a pod (named above).
  static azure_workload_identity_options from_environment();
};

/// Managed identity: the Azure Instance Metadata Service of a VM, VM scale set or AKS node, or
/// the local identity endpoint of App Service and Functions.
struct azure_managed_identity_options {
  /// A user-assigned identity's client id; empty: the system-assigned identity (or the only
  /// user-assigned one). AZURE_CLIENT_ID in from_environment().
  std::string client_id;
  /// The IMDS origin (tests point it at a local fake).
  std::string imds_endpoint = "http://169.254.169.254";
  /// App Service / Functions: IDENTITY_ENDPOINT and IDENTITY_HEADER. When both are set they are
  /// used instead of IMDS.
  std::string identity_endpoint;
  std::string identity_header;                   ///< Never logged.
  std::chrono::milliseconds http_timeout{5000};  ///< Bound on one token request.

  /// The options from AZURE_CLIENT_ID, IDENTITY_ENDPOINT and IDENTITY_HEADER.
  static azure_managed_identity_options from_environment();
};

/// A provider for AKS workload identity: POST {authority_host}{tenant_id}/oauth2/v2.0/token.
/// A missing variable fails each fetch with credentials_errc::not_configured naming it.
std::shared_ptr<azure_token_provider> make_azure_workload_identity_provider(
    boost::asio::any_io_executor executor, azure_workload_identity_options options);

/// A provider for managed identity: GET {imds_endpoint}/metadata/identity/oauth2/token with
/// `Metadata: true`, or the App Service identity endpoint with `X-IDENTITY-HEADER`.
std::shared_ptr<azure_token_provider> make_azure_managed_identity_provider(
    boost::asio::any_io_executor executor, azure_managed_identity_options options);

/// Settings of the default token chain.
struct azure_token_chain_options {
  std::chrono::milliseconds http_timeout{5000};  ///< Bound on one token request.
  tls_config tls;                                ///< TLS to the Entra ID authority.
};

/// The Azure SDKs' order, decided once from the environment when the chain is made: workload
/// identity when AZURE_FEDERATED_TOKEN_FILE is set, else managed identity (App Service's
/// endpoint when IDENTITY_ENDPOINT and IDENTITY_HEADER are set, else IMDS). The chosen provider's
/// failures are reported as they are: a broken workload identity set-up never falls back to
/// another identity.
std::shared_ptr<azure_token_provider> make_azure_default_token_chain(
    boost::asio::any_io_executor executor, azure_token_chain_options options = {});

}  // namespace s3lect::inline v1
