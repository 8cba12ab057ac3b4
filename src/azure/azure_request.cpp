#include "azure_request.hpp"

#include "s3_request.hpp"
#include "shared_key.hpp"
#include "uri_encode.hpp"

#include <chrono>
#include <ctime>

namespace s3lect::inline v1::detail {
namespace {

constexpr std::string_view metadata_prefix = "x-ms-meta-";

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Now as an RFC 9110 IMF-fixdate, the form x-ms-date takes.
std::string http_date_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[40];
  const std::size_t size = std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return std::string(text, size);
}

/// The headers of Put Blob and Put Block List: the blob's type, the condition and the metadata.
void add_put_headers(const blob_request_parts& parts,
                     std::vector<std::pair<std::string, std::string>>& headers) {
  if (parts.put == blob_put::block_list) {
    // The body is the list of blocks; the blob's own type goes in x-ms-blob-content-type.
    headers.emplace_back("Content-Type", "application/xml");
    headers.emplace_back("x-ms-blob-content-type", "application/json");
  } else {
    headers.emplace_back("x-ms-blob-type", "BlockBlob");
    headers.emplace_back("Content-Type", "application/json");
  }
  if (parts.condition->type == put_condition::kind::if_absent) {
    headers.emplace_back("If-None-Match", "*");
  } else {
    // Azure's ETags are quoted entity tags; they are kept normalised, without the quotes.
    headers.emplace_back("If-Match", "\"" + parts.condition->etag + "\"");
  }
  if (!parts.metadata) return;
  for (const auto& [name, value] : *parts.metadata) {
    std::string sent(metadata_prefix);
    for (const char c : name) sent += c == '-' ? '_' : c;
    headers.emplace_back(std::move(sent), value);
  }
}

/// The query parameters of a Put Block or Put Block List, decoded.
std::vector<std::pair<std::string, std::string>> query_of(const blob_request_parts& parts) {
  if (parts.put == blob_put::block) return {{"comp", "block"}, {"blockid", parts.block_id}};
  if (parts.put == blob_put::block_list) return {{"comp", "blocklist"}};
  return {};
}

}  // namespace

http_request build_blob_request(const blob_endpoint& endpoint, std::string_view container,
                                const blob_authorization& authorization, s3_operation kind,
                                std::string_view key, blob_request_parts parts) {
  http_request request;
  request.method = std::string(method_of(kind));
  const std::string path = blob_path(endpoint, container, key);
  request.target = path;
  std::vector<std::pair<std::string, std::string>> query = query_of(parts);
  char separator = '?';
  for (const auto& [name, value] : query) {
    request.target += separator + name + "=" + uri_encode(value, false);  // base64 has + / =
    separator = '&';
  }
  const bool sas = authorization.decoded_key.empty() && !authorization.sas_query.empty();
  if (sas) request.target += separator + authorization.sas_query;
  auto& headers = request.headers;
  headers.emplace_back("Host", endpoint.host_header);
  headers.emplace_back("x-ms-date", http_date_now());
  headers.emplace_back("x-ms-version", std::string(blob_api_version));
  if (parts.condition) add_put_headers(parts, headers);
  if (!parts.read_if_match.empty()) {
    headers.emplace_back("If-Match", "\"" + parts.read_if_match + "\"");
  }
  if (!parts.range.empty()) headers.emplace_back("x-ms-range", parts.range);
  if (!authorization.decoded_key.empty()) {
    shared_key_request to_sign;
    to_sign.method = request.method;
    to_sign.path = path;
    to_sign.headers = headers;
    to_sign.query = std::move(query);
    to_sign.content_length = parts.body.size() + parts.body_file_size;
    headers.emplace_back("Authorization", shared_key_authorization(to_sign, authorization.account,
                                                                   authorization.decoded_key));
  } else if (!sas && !authorization.bearer_token.empty()) {
    // "Authorize with Microsoft Entra ID" (Storage REST API): a bearer token needs
    // x-ms-version 2017-11-09 or later, and HTTPS on Azure itself.
    headers.emplace_back("Authorization", "Bearer " + authorization.bearer_token);
  }
  headers.emplace_back("User-Agent", "s3lect");
  request.body = std::move(parts.body);
  request.body_file = std::move(parts.body_file);
  request.body_file_size = parts.body_file_size;
  request.body_file_offset = parts.body_file_offset;
  return request;
}

std::string blob_metadata_problem(const object_metadata& metadata) {
  for (const auto& [name, value] : metadata) {
    const bool starts_with_letter = !name.empty() && name.front() >= 'a' && name.front() <= 'z';
    bool word = starts_with_letter;
    for (const char c : name) {
      word = word && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    }
    if (!word) {
      return "metadata: name '" + name +
             "' is not a lower-case letter followed by letters, digits and '-' (Azure)";
    }
    for (const char c : value) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < ' ' || byte >= 0x7f) {
        return "metadata: value of '" + name + "' is not printable ASCII";
      }
    }
    // Shared Key signs a header's value trimmed, and the server trims it too: spaces at either
    // end would not round-trip.
    if (!value.empty() && (value.front() == ' ' || value.back() == ' ')) {
      return "metadata: value of '" + name + "' starts or ends with a space (Azure)";
    }
  }
  return {};
}

object_metadata blob_metadata_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  object_metadata metadata;
  for (const auto& [name, value] : headers) {
    if (name.size() <= metadata_prefix.size()) continue;
    std::string lowered;
    lowered.reserve(name.size());
    for (const char c : name) lowered += ascii_lower(c);
    if (!lowered.starts_with(metadata_prefix)) continue;
    std::string own = lowered.substr(metadata_prefix.size());
    for (char& c : own) c = c == '_' ? '-' : c;
    metadata.emplace(std::move(own), value);
  }
  return metadata;
}

}  // namespace s3lect::inline v1::detail
