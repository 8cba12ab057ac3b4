// Azure connection strings: `Key=Value;Key=Value;...` as the Azure SDKs read them
// (AZURE_STORAGE_CONNECTION_STRING). Pure string functions; no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Azurite's well-known development account and key (its documentation publishes both), which
/// `UseDevelopmentStorage=true` stands for.
inline constexpr std::string_view development_account = "devstoreaccount1";
inline constexpr std::string_view development_key =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// What a connection string says about the blob service.
struct connection_settings {
  std::string account;      ///< AccountName
  std::string account_key;  ///< AccountKey
  std::string sas_token;    ///< SharedAccessSignature
  /// BlobEndpoint, else built from DefaultEndpointsProtocol, AccountName and EndpointSuffix;
  /// empty when none of them says where.
  std::string blob_endpoint;
};

/// Parses `text`. Keys are case-insensitive and values may contain '=' (base64 keys end with
/// it); empty segments are ignored. Returns nullopt with `problem` set for a segment without
/// '=', a key given twice, or `UseDevelopmentStorage` mixed with account settings.
std::optional<connection_settings> parse_connection_string(std::string_view text,
                                                           std::string& problem);

}  // namespace s3lect::inline v1::detail
