// TLS settings, one shape for every TLS endpoint s3lect has: the S3 client, the peer client, the
// health server and the metrics listener.
#pragma once

#include <string>

namespace s3lect {

/// How one side of a TLS connection proves who it is and whom it trusts.
///
/// A client (S3, peer) checks the server's certificate against `ca_file`/`ca_pem` (the system
/// roots when both are empty) and sends `certificate_*`/`private_key_*` for mutual TLS when set.
/// A server (health, metrics) presents `certificate_*`/`private_key_*` and checks client
/// certificates against `ca_file`/`ca_pem` when set. What each place requires is checked by the
/// validate() of its own configuration.
struct tls_config {
  std::string ca_file;  ///< PEM file of trusted CAs.
  std::string ca_pem;   ///< PEM text of trusted CAs, in addition to ca_file.
  /// Clients only. Off only for experiments: anyone can then impersonate the server.
  bool verify_peer = true;
  /// This side's certificate chain (leaf first): at most one of the file and the PEM text.
  std::string certificate_file;
  std::string certificate_pem;
  /// The certificate's unencrypted private key: at most one of the file and the PEM text.
  std::string private_key_file;
  std::string private_key_pem;
  /// Servers only: refuse clients without a certificate that chains to the CAs above.
  bool require_client_cert = false;
};

}  // namespace s3lect
