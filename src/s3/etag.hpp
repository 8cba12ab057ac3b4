// ETag spelling shared by every S3 call that reads or compares one.
#pragma once

#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The bare entity tag: surrounding whitespace, a weak "W/" prefix and the quotes removed, so
/// `W/"abc"`, `"abc"` and `abc` all give `abc`. Send it unquoted in If-Match: Ceph RGW answers
/// 412 to a quoted one (see docs/s3-compat.md), while AWS accepts both.
std::string normalize_etag(std::string_view etag);

}  // namespace s3lect::inline v1::detail
