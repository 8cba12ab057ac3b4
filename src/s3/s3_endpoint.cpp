#include "s3_endpoint.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {
namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool ends_with_ascii_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<long>(suffix.size()),
                    [](char a, char b) {
                      const auto lower = [](char c) {
                        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
                      };
                      return lower(a) == lower(b);
                    });
}

}  // namespace

std::string bucket_name_problem(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return "must be 3 to 63 characters long";
  for (char c : bucket) {
    if (!is_lower_alnum(c) && c != '.' && c != '-') {
      return "may contain only lower-case letters, digits, '.' and '-'";
    }
  }
  if (!is_lower_alnum(bucket.front()) || !is_lower_alnum(bucket.back())) {
    return "must start and end with a letter or digit";
  }
  if (bucket.find("..") != std::string_view::npos) return "must not contain \"..\"";
  if (is_ipv4_literal(bucket)) return "must not be formatted as an IP address";
  return {};
}

bool is_aws_host(std::string_view host) {
  return ends_with_ascii_nocase(host, ".amazonaws.com") ||
         ends_with_ascii_nocase(host, ".amazonaws.com.cn");
}

bool virtual_host_compatible(std::string_view bucket, bool tls) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  if (!bucket_name_problem(bucket).empty()) return false;
  return !(tls && bucket.find('.') != std::string_view::npos);
}

request_addressing choose_addressing(const endpoint_url& endpoint, std::string_view bucket,
                                     addressing_style style) {
  bool virtual_hosted = style == addressing_style::virtual_hosted;
  if (style == addressing_style::automatic) {
    virtual_hosted = !endpoint.host_is_ip() && is_aws_host(endpoint.host) &&
                     virtual_host_compatible(bucket, endpoint.tls);
  }

  request_addressing result;
  if (virtual_hosted) {
    result.connect_host = std::string(bucket) + "." + endpoint.host;
  } else {
    result.connect_host = endpoint.host;
    result.path_bucket = std::string(bucket);
  }
  result.host_header =
      endpoint.host_is_ipv6 ? "[" + result.connect_host + "]" : result.connect_host;
  if (!endpoint.default_port()) result.host_header += ":" + std::to_string(endpoint.port);
  return result;
}

}  // namespace s3lect::inline v1::detail
