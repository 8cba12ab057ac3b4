#include "azure_endpoint.hpp"

#include "uri_encode.hpp"

namespace s3lect::inline v1::detail {
namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

std::optional<blob_endpoint> parse_blob_endpoint(std::string_view url, std::string& problem) {
  const std::size_t scheme_end = url.find("://");
  const std::size_t path_start =
      scheme_end == std::string_view::npos ? std::string_view::npos : url.find('/', scheme_end + 3);
  std::string_view path;
  if (path_start != std::string_view::npos) {
    path = url.substr(path_start);
    url = url.substr(0, path_start);
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  for (const char c : path) {
    if (c != '/' && !is_unreserved(static_cast<unsigned char>(c))) {
      problem = "the path may hold only letters, digits, '-', '_', '.', '~' and '/'";
      return std::nullopt;
    }
  }
  if (path.find("//") != std::string_view::npos) {
    problem = "the path has an empty segment";
    return std::nullopt;
  }
  auto parsed = parse_endpoint_url(url, problem);
  if (!parsed) return std::nullopt;
  blob_endpoint out;
  out.url = std::move(*parsed);
  out.path_prefix = std::string(path);
  const std::string host = out.url.host_is_ipv6 ? "[" + out.url.host + "]" : out.url.host;
  out.host_header = out.url.default_port() ? host : host + ":" + std::to_string(out.url.port);
  return out;
}

std::string container_name_problem(std::string_view container) {
  if (container.size() < 3 || container.size() > 63) return "must be 3 to 63 characters long";
  for (const char c : container) {
    if (!is_lower_alnum(c) && c != '-') {
      return "may contain only lower-case letters, digits and '-'";
    }
  }
  if (!is_lower_alnum(container.front()) || !is_lower_alnum(container.back())) {
    return "must start and end with a letter or digit";
  }
  if (container.find("--") != std::string_view::npos) return "must not contain \"--\"";
  return {};
}

std::string blob_path(const blob_endpoint& endpoint, std::string_view container,
                      std::string_view key) {
  return endpoint.path_prefix + "/" + std::string(container) + "/" + uri_encode(key, true);
}

}  // namespace s3lect::inline v1::detail
