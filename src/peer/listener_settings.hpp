// The server skeleton's settings from what the health server and the metrics listener
// configure alike (bind address, limits, timeouts, logger).
#pragma once

#include "health_protocol.hpp"
#include "http_server.hpp"

#include <boost/asio/ip/address.hpp>

#include <string>

namespace s3lect::detail {

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
  settings.max_connections = config.max_connections;
  settings.log = config.log;
  return settings;
}

}  // namespace s3lect::detail
