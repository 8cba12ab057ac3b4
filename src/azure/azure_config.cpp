// azure_blob_config: the Azure SDKs' environment variables, the connection string, validation.
#include <s3lect/azure_blob_client.hpp>

#include "azure_endpoint.hpp"
#include "block_upload.hpp"
#include "connection_string.hpp"
#include "shared_key.hpp"

#include <boost/asio/ip/address.hpp>

#include <cstdlib>

namespace s3lect::inline v1 {
namespace {

/// The variable's value; unset and empty are the same, as in the Azure SDKs.
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

void fill_if_empty(std::string& field, const std::string& value) {
  if (field.empty()) field = value;
}

bool has_space_or_control(std::string_view s) {
  for (unsigned char c : s) {
    if (c <= ' ' || c == 0x7f) return true;
  }
  return false;
}

std::string default_endpoint(const std::string& account) {
  return "https://" + account + ".blob.core.windows.net";
}

}  // namespace

azure_blob_config azure_blob_config::from_environment(std::string container) {
  azure_blob_config config;
  config.container = std::move(container);
  config.connection_string = environment("AZURE_STORAGE_CONNECTION_STRING");
  if (config.connection_string.empty()) {
    config.account = environment("AZURE_STORAGE_ACCOUNT");
    config.account_key = environment("AZURE_STORAGE_KEY");
    config.sas_token = environment("AZURE_STORAGE_SAS_TOKEN");
    // No secret in the environment: Entra ID, as DefaultAzureCredential would.
    config.use_default_token_chain = config.account_key.empty() && config.sas_token.empty();
  }
  return config;
}

std::optional<azure_blob_config> azure_blob_config::resolved(std::string& problem) const {
  azure_blob_config out = *this;
  if (!connection_string.empty()) {
    const auto settings = detail::parse_connection_string(connection_string, problem);
    if (!settings) return std::nullopt;
    // A key or a SAS is taken whole from one place: mixing them could only fail to sign.
    if (out.account_key.empty() && out.sas_token.empty()) {
      out.account_key = settings->account_key;
      out.sas_token = settings->sas_token;
    }
    fill_if_empty(out.account, settings->account);
    fill_if_empty(out.endpoint, settings->blob_endpoint);
  }
  if (out.endpoint.empty() && !out.account.empty() && !has_space_or_control(out.account)) {
    out.endpoint = default_endpoint(out.account);
  }
  if (out.sas_token.starts_with('?')) out.sas_token.erase(0, 1);
  return out;
}

bool azure_blob_config::answers_authenticated() const {
  std::string problem;
  const auto full = resolved(problem);
  if (!full) return false;
  if (full->endpoint.empty()) return true;  // Azure's, https://
  const auto url = detail::parse_blob_endpoint(full->endpoint, problem);
  if (!url) return false;
  if (url->url.tls) return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(url->url.host, ec);
  return !ec && address.is_loopback();
}

std::optional<std::string> azure_blob_config::validate() const {
  std::string problem;
  const auto full = resolved(problem);
  if (!full) return "connection_string: " + problem;
  if (full->container.empty()) return "container: must not be empty";
  if (problem = detail::container_name_problem(full->container); !problem.empty()) {
    return "container: " + problem;
  }
  // A SAS or a bearer token signs nothing with the account's name: with an endpoint, no account
  // is needed.
  const bool no_key = full->account_key.empty();
  const bool bearer =
      no_key && full->sas_token.empty() && (full->token_provider || full->use_default_token_chain);
  const bool sas_only = no_key && !full->sas_token.empty();
  if (full->account.empty() && !((sas_only || bearer) && !full->endpoint.empty())) {
    return "account: not set (give the account, or a connection string that names it)";
  }
  if (has_space_or_control(full->account) || full->account.find(':') != std::string::npos ||
      full->account.find('/') != std::string::npos) {
    return "account: must not contain ':', '/', spaces or control characters";
  }
  if (!detail::parse_blob_endpoint(full->endpoint, problem)) return "endpoint: " + problem;
  if (no_key && full->sas_token.empty() && !bearer) {
    return "account_key: not set, and no sas_token or token_provider either (Shared Key, a SAS "
           "or an Entra ID token is needed)";
  }
  if (!full->account_key.empty() && !detail::base64_decode(full->account_key)) {
    return "account_key: is not base64 (the key as the portal shows it)";
  }
  if (full->account_key.empty() && has_space_or_control(full->sas_token)) {
    return "sas_token: must not contain spaces or control characters";
  }
  if (full->request_timeout.count() < 0) {
    return "request_timeout: must not be negative (0 disables it)";
  }
  if (full->max_body_bytes == 0) return "max_body_bytes: must be positive";
  if (full->max_put_blob_bytes == 0 || full->max_put_blob_bytes > 5000ull * 1024 * 1024) {
    return "max_put_blob_bytes: must be between 1 byte and the 5,000 MiB one Put Blob takes";
  }
  if (full->block_bytes == 0 || full->block_bytes > detail::max_block_bytes) {
    return "block_bytes: must be between 1 byte and the 4,000 MiB one Put Block takes";
  }
  std::string unused;
  if (detail::parse_blob_endpoint(full->endpoint, unused)->url.tls && !full->tls.verify_peer &&
      (!full->tls.ca_file.empty() || !full->tls.ca_pem.empty())) {
    return "tls.verify_peer: is off although a CA is configured";
  }
  return std::nullopt;
}

}  // namespace s3lect::inline v1
