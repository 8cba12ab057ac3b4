// Where S3 requests go: the endpoint URL, the bucket name rules and the addressing style.
// Pure string functions shared by s3_config::validate() and the client; no I/O.
#pragma once

#include "endpoint_url.hpp"

#include <s3lect/s3_client.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The reason `bucket` is not a valid S3 bucket name, or an empty string when it is one
/// (3-63 characters of a-z 0-9 . -, starting and ending with a letter or digit, no "..",
/// not shaped like an IPv4 address).
std::string bucket_name_problem(std::string_view bucket);

/// True for AWS S3 hosts (`*.amazonaws.com`, `*.amazonaws.com.cn`), where virtual-hosted style
/// is the norm and path style is deprecated.
bool is_aws_host(std::string_view host);

/// True when `bucket` may prefix the endpoint host: a lower-case DNS label of 3-63 characters,
/// without dots over TLS (a wildcard certificate covers exactly one label).
bool virtual_host_compatible(std::string_view bucket, bool tls);

/// How one client's requests are addressed; the same for every key.
struct request_addressing {
  std::string connect_host;  ///< resolved, sent as SNI and checked against the certificate
  std::string host_header;   ///< the Host header: connect host, plus ":port" unless default
  std::string path_bucket;   ///< the bucket as first path segment; empty for virtual-hosted
};

/// Chooses path or virtual-hosted style (automatic: virtual-hosted on AWS hosts when the bucket
/// allows it).
request_addressing choose_addressing(const endpoint_url& endpoint, std::string_view bucket,
                                     addressing_style style);

}  // namespace s3lect::inline v1::detail
