// The configuration of a peer-watch elector with CA-mode TLS, as the candidate tests run them:
// a lease, every other interval derived from it in the default proportions, and a priority.
#pragma once

#include <s3lect/config.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace s3lect::test {

inline elector_config peer_watch_config(std::string lock_key, std::string server_id,
                                        std::chrono::milliseconds lease, std::string ca_pem,
                                        std::int32_t priority) {
  elector_config config;
  config.lock_key = std::move(lock_key);
  config.server_id = std::move(server_id);
  // Replaced by the address of its health server where a test runs one.
  config.server_address = "127.0.0.1:1";
  elector_timing timing;
  timing.lease = lease;
  config.apply_timing(timing);
  config.peer.enabled = true;
  config.peer.watch = true;
  config.peer.tls.ca_pem = std::move(ca_pem);
  config.coordination.priority = priority;
  return config;
}

}  // namespace s3lect::test
