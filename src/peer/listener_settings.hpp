// The server skeleton's settings from what the health server and the metrics listener
// configure alike (bind address, limits, timeouts, logger).
#pragma once

#include "health_protocol.hpp"
#include "http_server.hpp"

#include <boost/asio/ip/address.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace s3lect::inline v1::detail {

/// The limits health_server_config and metrics_server_config share, checked alike: nullopt
/// when valid, else "field: what is wrong".
template <class Config>
std::optional<std::string> check_connection_limits(const Config& config) {
  if (config.first_request_timeout <= std::chrono::milliseconds::zero()) {
    return "first_request_timeout: must be positive, is " +
           std::to_string(config.first_request_timeout.count()) + " ms";
  }
  if (config.max_connections == 0) return "max_connections: must be at least 1";
  if (config.max_connections_per_source == 0) {
    return "max_connections_per_source: must be at least 1";
  }
  return std::nullopt;
}

/// `Config` is health_server_config or metrics_server_config, validated already (the bind
/// address is an IP literal and a port).
template <class Config>
http_server_settings listener_settings(const Config& config, std::string name) {
  http_server_settings settings;
  settings.name = std::move(name);
  const auto parts = split_bind_address(config.bind_address);
  settings.endpoint = {boost::asio::ip::make_address(std::string(parts->host)), parts->port};
  settings.max_header_bytes = config.max_header_bytes;
  settings.read_timeout = config.read_timeout;
  settings.idle_timeout = config.idle_timeout;
  settings.first_request_timeout = config.first_request_timeout;
  settings.max_connections = config.max_connections;
  settings.max_connections_per_source = config.max_connections_per_source;
  settings.log = config.log;
  return settings;
}

}  // namespace s3lect::inline v1::detail
