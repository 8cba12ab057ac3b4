#include "object_operation.hpp"

#include "etag.hpp"

#include <charconv>
#include <filesystem>
#include <system_error>

namespace s3lect::inline v1::detail {

bool range_leaves_more(std::string_view content_range, std::size_t received) {
  const std::size_t slash = content_range.rfind('/');
  if (slash == std::string_view::npos) return true;
  const std::string_view total = content_range.substr(slash + 1);
  std::uint64_t size = 0;
  const auto [end, ec] = std::from_chars(total.data(), total.data() + total.size(), size);
  return ec != std::errc{} || end != total.data() + total.size() || size > received;
}

boost::system::error_code take_found(http_response& response, std::size_t head_bytes,
                                     object_metadata metadata, get_result& result) {
  const std::string_view etag = response.header("ETag");
  if (etag.empty()) {
    result.info.message = "GET reply has no ETag header";
    return errc::protocol_error;
  }
  object found;
  found.etag = normalize_etag(etag);
  found.last_modified = parse_http_date(response.header("Last-Modified"));
  found.metadata = std::move(metadata);
  found.truncated = response.truncated;
  if (response.status == 206) {
    found.truncated = range_leaves_more(response.header("Content-Range"), response.body.size());
  }
  if (head_bytes > 0 && response.body.size() > head_bytes) {
    response.body.resize(head_bytes);  // a store that ignored the range
    found.truncated = true;
  }
  found.body = std::move(response.body);
  result.found.emplace(std::move(found));
  return {};
}

std::optional<std::uint64_t> regular_file_size(const std::string& path, std::string& problem) {
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const std::uintmax_t size = regular ? std::filesystem::file_size(path, ec) : 0;
  if (ec || !regular) {
    problem = "body file '" + path + "': " + (ec ? ec.message() : "not a regular file");
    return std::nullopt;
  }
  return size;
}

}  // namespace s3lect::inline v1::detail
