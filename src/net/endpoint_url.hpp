// An endpoint URL taken apart: `http[s]://host[:port]`, for every client that connects to one
// (S3, the credential endpoints). Pure string functions; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// An endpoint URL taken apart: `http[s]://host[:port]`.
struct endpoint_url {
  bool tls = true;
  std::string host;            ///< a DNS name, dotted IPv4, or IPv6 without its brackets
  std::uint16_t port = 443;    ///< the explicit port, else the scheme's default
  bool explicit_port = false;  ///< true when the URL named a port, even the default one
  bool host_is_ipv4 = false;
  bool host_is_ipv6 = false;

  bool host_is_ip() const noexcept { return host_is_ipv4 || host_is_ipv6; }
  /// True when the port is the scheme's default, so the Host header leaves it out.
  bool default_port() const noexcept { return port == (tls ? 443 : 80); }
};

/// Parses `http[s]://host[:port]` with an optional single trailing '/'. Returns nullopt and sets
/// `problem` to the rule broken (no path, query, user info or fragment is allowed).
std::optional<endpoint_url> parse_endpoint_url(std::string_view url, std::string& problem);

/// True for a dotted-quad IPv4 address.
bool is_ipv4_literal(std::string_view host);

}  // namespace s3lect::inline v1::detail
