// User metadata as S3 carries it: one `x-amz-meta-NAME` header per entry, on a PUT and on the
// answer to a GET. Pure functions, unit-tested without sockets.
#pragma once

#include <s3lect/storage.hpp>

#include <string>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// Why `metadata` cannot be sent as headers (a name that is not a lower-case token, a value
/// with control or non-ASCII characters), or an empty string.
std::string metadata_problem(const object_metadata& metadata);

/// Appends one `x-amz-meta-NAME: value` header per entry.
void append_metadata_headers(const object_metadata& metadata,
                             std::vector<std::pair<std::string, std::string>>& headers);

/// The user metadata among an answer's headers, names lower-cased and without the prefix.
object_metadata metadata_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace s3lect::inline v1::detail
