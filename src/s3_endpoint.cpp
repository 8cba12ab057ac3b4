#include "s3_endpoint.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace s3lect::detail {
namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
  return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/// A DNS host name, leniently: labels of letters, digits, '-' and '_' (container and internal
/// names use '_'), 1-63 characters each, not starting or ending with '-'; 253 characters at most.
bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t start = 0;
  while (start <= host.size()) {
    const std::size_t dot = std::min(host.find('.', start), host.size());
    const std::string_view label = host.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!is_alnum(c) && c != '-' && c != '_') return false;
    }
    start = dot + 1;
  }
  return true;
}

bool is_ipv6_literal(std::string_view host) {
  const std::string copy(host);
  in6_addr address{};
  return inet_pton(AF_INET6, copy.c_str(), &address) == 1;
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

bool is_ipv4_literal(std::string_view host) {
  const std::string copy(host);
  in_addr address{};
  // inet_pton accepts exactly the dotted-quad form; inet_aton's "127.1" shorthands are not hosts
  // a URL parser should take for addresses.
  return inet_pton(AF_INET, copy.c_str(), &address) == 1;
}

std::optional<endpoint_url> parse_endpoint_url(std::string_view url, std::string& problem) {
  endpoint_url result;
  if (url.starts_with("https://")) {
    result.tls = true;
    result.port = 443;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    result.tls = false;
    result.port = 80;
    url.remove_prefix(7);
  } else {
    problem = "must start with http:// or https://";
    return std::nullopt;
  }
  if (url.ends_with('/')) url.remove_suffix(1);
  if (url.find_first_of("/?#") != std::string_view::npos) {
    problem = "must not have a path, query or fragment";
    return std::nullopt;
  }
  if (url.find('@') != std::string_view::npos) {
    problem = "must not contain user information";
    return std::nullopt;
  }

  std::string_view host;
  std::string_view port;
  if (url.starts_with('[')) {
    const std::size_t close = url.find(']');
    if (close == std::string_view::npos) {
      problem = "IPv6 address lacks its closing ']'";
      return std::nullopt;
    }
    host = url.substr(1, close - 1);
    const std::string_view rest = url.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        problem = "unexpected characters after the IPv6 address";
        return std::nullopt;
      }
      port = rest.substr(1);
      if (port.empty()) {
        problem = "empty port";
        return std::nullopt;
      }
    }
    if (!is_ipv6_literal(host)) {
      problem = "invalid IPv6 address";
      return std::nullopt;
    }
    result.host_is_ipv6 = true;
  } else {
    const std::size_t colon = url.find(':');
    host = url.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = url.substr(colon + 1);
      if (port.empty()) {
        problem = "empty port";
        return std::nullopt;
      }
    }
    if (host.empty()) {
      problem = "missing host";
      return std::nullopt;
    }
    result.host_is_ipv4 = is_ipv4_literal(host);
    if (!result.host_is_ipv4 && !is_host_name(host)) {
      problem = "invalid host name";
      return std::nullopt;
    }
  }

  if (!port.empty()) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
      problem = "port must be a number from 1 to 65535";
      return std::nullopt;
    }
    result.port = static_cast<std::uint16_t>(value);
    result.explicit_port = true;
  }
  result.host = std::string(host);
  return result;
}

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

}  // namespace s3lect::detail
