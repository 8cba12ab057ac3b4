// One Blob service request as azure_blob_client sends it: the authorised HTTP request of an
// operation (Get Blob, Put Blob, Put Block, Put Block List, Delete Blob), and the blob metadata
// headers.
#pragma once

#include <s3lect/storage.hpp>

#include "azure_endpoint.hpp"
#include "http_client.hpp"
#include "s3_reply.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// The Storage REST API version every request asks for (`x-ms-version`).
inline constexpr std::string_view blob_api_version = "2025-01-05";

/// How requests are authorised: Shared Key when `decoded_key` is set, else the SAS query when
/// set, else `Authorization: Bearer` with the Entra ID token in `bearer_token`.
struct blob_authorization {
  std::string account;
  std::string decoded_key;   ///< the account key's bytes
  std::string sas_query;     ///< the SAS token without its leading '?'
  std::string bearer_token;  ///< an Entra ID access token, fetched per request
};

/// Which request a PUT is.
enum class blob_put {
  blob,        ///< Put Blob: the whole body, with the condition and the metadata
  block,       ///< Put Block: one block of a larger body, which changes no blob
  block_list,  ///< Put Block List: commits the blocks in its body, with the condition and metadata
};

/// What goes into one request besides its operation and key (the operations are the storage
/// interface's, named as for S3: s3_reply.hpp).
struct blob_request_parts {
  std::string body;
  /// Set: the body continues with body_file_size bytes of this file from body_file_offset on.
  std::string body_file;
  std::uint64_t body_file_size = 0;
  std::uint64_t body_file_offset = 0;
  blob_put put = blob_put::blob;              ///< PUT only
  std::string block_id;                       ///< Put Block: the block's ID (block_upload.hpp)
  const put_condition* condition = nullptr;   ///< PUT only
  const object_metadata* metadata = nullptr;  ///< PUT only
  std::string read_if_match;                  ///< GET: only this version
  std::string range;                          ///< GET: an x-ms-range value
};

/// The request for blob `key` in `container`, authorised by `authorization`.
http_request build_blob_request(const blob_endpoint& endpoint, std::string_view container,
                                const blob_authorization& authorization, s3_operation kind,
                                std::string_view key, blob_request_parts parts);

/// Why `metadata` cannot be sent to Azure, or an empty string: a name must be a lower-case
/// letter followed by lower-case letters, digits and '-' (each '-' is sent as '_', since Azure
/// wants C# identifiers), and a value printable ASCII without leading or trailing spaces.
std::string blob_metadata_problem(const object_metadata& metadata);

/// The user metadata among a Get Blob answer's headers: `x-ms-meta-NAME`, names lower-cased
/// and '_' read back as '-'.
object_metadata blob_metadata_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace s3lect::inline v1::detail
