// How s3lect's HTTPS clients trust a server: the store, the AWS credential endpoints.
#pragma once

#include <string>

namespace s3lect {

/// TLS settings for HTTPS endpoints.
struct tls_config {
  std::string ca_file;      ///< PEM file of trusted CAs; empty with empty ca_pem: the system roots.
  std::string ca_pem;       ///< PEM text of trusted CAs, in addition to ca_file.
  bool verify_peer = true;  ///< Off only for experiments: anyone can then impersonate the store.
};

}  // namespace s3lect
