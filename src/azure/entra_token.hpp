// Sans-I/O parts of the Entra ID token providers: the requests they send and the reading of the
// answers. The parser never throws on bad input (only bad_alloc), and its messages name the
// provider and the problem, never the token, the assertion or the identity header.
//
// Protocol sources:
// - Microsoft identity platform, "OAuth 2.0 client credentials flow", third case: access token
//   request with a federated credential (client_assertion_type jwt-bearer), and the answer's
//   access_token / expires_in; learn.microsoft.com/entra/identity-platform/
//   v2-oauth2-client-creds-grant-flow. AKS workload identity injects AZURE_FEDERATED_TOKEN_FILE,
//   AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_AUTHORITY_HOST (learn.microsoft.com/azure/aks/
//   workload-identity-overview; azure-identity's WorkloadIdentityCredential re-reads the file).
// - "How to use managed identities for Azure resources on an Azure VM to acquire an access
//   token": GET http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01
//   &resource=... with `Metadata: true`; the answer's expires_in and expires_on are strings
//   (learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-to-use-vm-token).
// - App Service "Managed identities", REST endpoint reference: GET $IDENTITY_ENDPOINT
//   ?api-version=2019-08-01&resource=... with X-IDENTITY-HEADER: $IDENTITY_HEADER; expires_on in
//   seconds since the epoch (learn.microsoft.com/azure/app-service/overview-managed-identity).
#pragma once

#include <s3lect/azure_credentials.hpp>

#include "http_client.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The OAuth 2.0 scope (v2 endpoint) and resource (IMDS, App Service) of Azure Storage.
inline constexpr std::string_view storage_scope = "https://storage.azure.com/.default";
inline constexpr std::string_view storage_resource = "https://storage.azure.com/";

/// What one token fetch produced, as a value a coroutine can return.
struct token_outcome {
  boost::system::error_code ec;
  azure_token token;  ///< on failure only `message` is set
};

/// A failed fetch; `message` must already name the provider.
token_outcome token_failure(credentials_errc code, std::string message);

/// The form body of the client credentials grant with a federated assertion.
std::string workload_identity_form(std::string_view client_id, std::string_view assertion);

/// `{authority_host}{tenant}/oauth2/v2.0/token`, a '/' added after the host when missing.
std::string workload_identity_token_url(std::string_view authority_host,
                                        std::string_view tenant_id);

/// The query of a managed identity token request: `api-version=VERSION&resource=...`
/// [`&client_id=...`].
std::string managed_identity_query(std::string_view api_version, std::string_view client_id);

/// Reads a token endpoint's answer. On HTTP 200 a JSON object with a non-empty `access_token`
/// and `expires_in` (seconds from now, a number or a string) or `expires_on` (seconds since the
/// epoch, a number or a string); `expires_in` wins when both are present, since it does not
/// depend on this host's clock agreeing with Entra ID's. Otherwise fetch_failed with the status
/// and the answer's `error` / `error_description`. The token's provider is set to `provider`,
/// which also prefixes messages.
token_outcome parse_token_answer(unsigned http_status, std::string_view body,
                                 std::string_view provider,
                                 std::chrono::system_clock::time_point now);

/// Why `token` cannot be used (empty access token, characters a header cannot carry, already
/// expired at `now`), or an empty string. Never quotes the token.
std::string token_problem(const azure_token& token, std::chrono::system_clock::time_point now);

}  // namespace s3lect::inline v1::detail
