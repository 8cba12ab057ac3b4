// TLS settings, one shape for every TLS endpoint s3lect has: the S3 client, the peer client, the
// health server and the metrics listener.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <string>
#include <string_view>

namespace s3lect::inline v1 {

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
  std::string certificate_pem;  ///< The same as PEM text.
  /// The certificate's unencrypted private key: at most one of the file and the PEM text.
  std::string private_key_file;
  std::string private_key_pem;  ///< The same as PEM text.
  /// Servers only: refuse clients without a certificate that chains to the CAs above.
  bool require_client_cert = false;

  friend bool operator==(const tls_config&, const tls_config&) = default;  ///< Memberwise.
};

/// A key pair and a self-signed certificate made in memory, for zero-configuration peer TLS
/// (docs/peer-mode.md#zero-configuration-tls): the leader's health server presents it, the lock
/// record carries the pin, and followers trust the certificate whose key has that pin.
struct self_signed_identity {
  std::string certificate_pem;  ///< The certificate, PEM.
  std::string private_key_pem;  ///< Unencrypted; only ever in memory.
  std::string key_pin;          ///< public_key_pin() of the certificate.
};

/// A fresh EC P-256 key and a certificate for it, signed by itself. Never writes a file.
/// Throws boost::system::system_error(errc::invalid_config) when OpenSSL cannot make them.
self_signed_identity make_self_signed_identity();

/// Zero-configuration TLS for a server (docs/peer-mode.md#zero-configuration-tls): when `tls`
/// names no certificate and no key, makes a fresh make_self_signed_identity() into
/// tls.certificate_pem and tls.private_key_pem and returns its key pin, for the elector's
/// peer_config::key_pin; else changes nothing and returns "". health_server does this to its
/// settings. Throws boost::system::system_error(errc::invalid_config) when OpenSSL cannot.
std::string adopt_self_signed_identity(tls_config& tls);

/// The pin of a PEM certificate's public key: "sha256:" and the 64 lowercase hex digits of the
/// SHA-256 of its DER SubjectPublicKeyInfo. Empty when `certificate_pem` holds no certificate.
std::string public_key_pin(std::string_view certificate_pem);

}  // namespace s3lect::inline v1
