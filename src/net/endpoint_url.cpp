#include "endpoint_url.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace s3lect::inline v1::detail {
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

}  // namespace

bool is_ipv4_literal(std::string_view host) {
  const std::string copy(host);
  in_addr address{};
  // inet_pton accepts exactly the dotted-quad form; inet_aton's "127.1" shorthands are not hosts
  // a URL parser should take for addresses.
  return inet_pton(AF_INET, copy.c_str(), &address) == 1;
}

namespace {

/// Takes the scheme off `url` (setting tls and the default port) and checks that only an
/// authority remains. False with `problem` set otherwise.
bool take_scheme(std::string_view& url, endpoint_url& result, std::string& problem) {
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
    return false;
  }
  if (url.ends_with('/')) url.remove_suffix(1);
  if (url.find_first_of("/?#") != std::string_view::npos) {
    problem = "must not have a path, query or fragment";
    return false;
  }
  if (url.find('@') != std::string_view::npos) {
    problem = "must not contain user information";
    return false;
  }
  return true;
}

/// `[IPv6]` or `[IPv6]:port` into host and port (empty when absent).
bool split_bracketed(std::string_view authority, std::string_view& host, std::string_view& port,
                     std::string& problem) {
  const std::size_t close = authority.find(']');
  if (close == std::string_view::npos) {
    problem = "IPv6 address lacks its closing ']'";
    return false;
  }
  host = authority.substr(1, close - 1);
  const std::string_view rest = authority.substr(close + 1);
  if (!rest.empty()) {
    if (rest.front() != ':') {
      problem = "unexpected characters after the IPv6 address";
      return false;
    }
    port = rest.substr(1);
    if (port.empty()) {
      problem = "empty port";
      return false;
    }
  }
  if (!is_ipv6_literal(host)) {
    problem = "invalid IPv6 address";
    return false;
  }
  return true;
}

/// `host` or `host:port` (a name or an IPv4 literal) into host and port (empty when absent).
bool split_unbracketed(std::string_view authority, std::string_view& host, std::string_view& port,
                       bool& is_ipv4, std::string& problem) {
  const std::size_t colon = authority.find(':');
  host = authority.substr(0, colon);
  if (colon != std::string_view::npos) {
    port = authority.substr(colon + 1);
    if (port.empty()) {
      problem = "empty port";
      return false;
    }
  }
  if (host.empty()) {
    problem = "missing host";
    return false;
  }
  is_ipv4 = is_ipv4_literal(host);
  if (!is_ipv4 && !is_host_name(host)) {
    problem = "invalid host name";
    return false;
  }
  return true;
}

/// An explicit port, 1 to 65535, into `result`.
bool take_port(std::string_view port, endpoint_url& result, std::string& problem) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
    problem = "port must be a number from 1 to 65535";
    return false;
  }
  result.port = static_cast<std::uint16_t>(value);
  result.explicit_port = true;
  return true;
}

}  // namespace

std::optional<endpoint_url> parse_endpoint_url(std::string_view url, std::string& problem) {
  endpoint_url result;
  if (!take_scheme(url, result, problem)) return std::nullopt;
  std::string_view host;
  std::string_view port;
  result.host_is_ipv6 = url.starts_with('[');
  const bool split = result.host_is_ipv6
                         ? split_bracketed(url, host, port, problem)
                         : split_unbracketed(url, host, port, result.host_is_ipv4, problem);
  if (!split) return std::nullopt;
  if (!port.empty() && !take_port(port, result, problem)) return std::nullopt;
  result.host = std::string(host);
  return result;
}

}  // namespace s3lect::inline v1::detail
