#include "object_operation.hpp"

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
