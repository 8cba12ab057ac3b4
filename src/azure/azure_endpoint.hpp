// Where Blob service requests go: the endpoint URL with its optional account path (emulators
// put the account there), and the container name rules. Pure string functions; no I/O.
#pragma once

#include "endpoint_url.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// A blob service endpoint taken apart.
struct blob_endpoint {
  endpoint_url url;
  /// The path before the container, without a trailing '/': empty for Azure
  /// (https://ACCOUNT.blob.core.windows.net), "/devstoreaccount1" for Azurite.
  std::string path_prefix;
  std::string host_header;  ///< the host, plus ":port" unless the scheme's default
};

/// Parses `http[s]://host[:port][/path]`; the path may only hold unreserved characters and
/// '/'. Returns nullopt with `problem` set.
std::optional<blob_endpoint> parse_blob_endpoint(std::string_view url, std::string& problem);

/// Why `container` is not a valid container name (3-63 characters of a-z 0-9 -, starting and
/// ending with a letter or digit, no "--"), or an empty string.
std::string container_name_problem(std::string_view container);

/// The encoded path of the blob `key`: prefix + "/" + container + "/" + key, each byte of the
/// key but '/' percent-encoded unless unreserved.
std::string blob_path(const blob_endpoint& endpoint, std::string_view container,
                      std::string_view key);

}  // namespace s3lect::inline v1::detail
