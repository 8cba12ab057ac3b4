// HTTP for the credential endpoints (IMDS, container endpoint, STS): absolute URLs with a path,
// and one request at a time under a timeout, over the shared http_client (http_client.cpp stays
// the only Beast client translation unit).
#pragma once

#include "endpoint_url.hpp"
#include "http_client.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// An absolute `http[s]://host[:port][/path][?query]` URL taken apart.
struct http_url {
  endpoint_url origin;
  std::string target = "/";  ///< path and query as sent; "/" when the URL has none
  std::string host_header;   ///< host (IPv6 in brackets) plus ":port" unless the default

  /// `scheme://host[:port]`, for messages: the path may carry identifiers worth keeping out of
  /// logs (the container endpoint's GUID).
  std::string origin_text() const;
};

/// Parses `url`; nullopt and `problem` set when it is not an absolute http(s) URL with a valid
/// host (a fragment, user information or spaces are refused).
std::optional<http_url> parse_http_url(std::string_view url, std::string& problem);

/// Sends requests to one origin, each bounded by a timeout; thread-safe. Connections are kept
/// alive between requests (IMDS: token PUT, then the GETs).
class credentials_http_client {
 public:
  /// Throws boost::system::system_error(errc::invalid_config) when TLS roots cannot be loaded.
  credentials_http_client(boost::asio::any_io_executor executor, const http_url& origin,
                          std::chrono::milliseconds timeout, tls_config tls = {});

  /// Sends `request` (the Host header is added here) and returns the reply or the failure:
  /// errc::timeout after the timeout, else the transport's error with a detail. Must be awaited
  /// on a strand.
  boost::asio::awaitable<exchange_result> send(http_request request);

  /// Closes idle connections.
  void close_idle();

 private:
  std::string host_header_;
  std::chrono::milliseconds timeout_;
  http_client pool_;
};

}  // namespace s3lect::inline v1::detail
