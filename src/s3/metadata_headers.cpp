#include "metadata_headers.hpp"

#include <string_view>

namespace s3lect::inline v1::detail {
namespace {

constexpr std::string_view metadata_prefix = "x-amz-meta-";

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// Printable ASCII only: S3 stores other bytes mangled, and CR/LF would split the request.
bool is_value_character(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= ' ' && byte < 0x7f;
}

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::string metadata_problem(const object_metadata& metadata) {
  for (const auto& [name, value] : metadata) {
    if (name.empty()) return "metadata: a name is empty";
    for (const char c : name) {
      if (!is_name_character(c)) return "metadata: name '" + name + "' is not a lower-case token";
    }
    for (const char c : value) {
      if (!is_value_character(c)) return "metadata: value of '" + name + "' is not printable ASCII";
    }
  }
  return {};
}

void append_metadata_headers(const object_metadata& metadata,
                             std::vector<std::pair<std::string, std::string>>& headers) {
  for (const auto& [name, value] : metadata) {
    headers.emplace_back(std::string(metadata_prefix) + name, value);
  }
}

object_metadata metadata_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  object_metadata metadata;
  for (const auto& [name, value] : headers) {
    if (name.size() <= metadata_prefix.size()) continue;
    std::string lowered;
    lowered.reserve(name.size());
    for (const char c : name) lowered += ascii_lower(c);
    if (!lowered.starts_with(metadata_prefix)) continue;
    metadata.emplace(lowered.substr(metadata_prefix.size()), value);
  }
  return metadata;
}

}  // namespace s3lect::inline v1::detail
