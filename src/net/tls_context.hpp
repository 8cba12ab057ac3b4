// The one place an OpenSSL context is built from a tls_config, for every TLS endpoint s3lect
// has: the S3 client, the peer client, the health server.
#pragma once

#include <s3lect/tls.hpp>

#include <memory>
#include <string_view>

// Declared only: the HTTP client's header names tls_field_names without pulling in OpenSSL.
namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace s3lect::detail {

/// Which end of the connection the context is for.
enum class tls_role { client, server };

/// How the configuration that holds the tls_config names its fields, so that an error names
/// the field the user set ("health_server_config.tls.ca_file", "peer_client_config.ca_pem").
struct tls_field_names {
  std::string_view prefix;  ///< prepended to every name below
  std::string_view ca_file = "ca_file";
  std::string_view ca_pem = "ca_pem";
  std::string_view certificate_file = "certificate_file";
  std::string_view certificate_pem = "certificate_pem";
  std::string_view private_key_file = "private_key_file";
  std::string_view private_key_pem = "private_key_pem";
};

/// A TLS 1.2+ context for `role`: the trusted CAs (a client without any trusts the system's;
/// a server with some verifies client certificates, and requires one with
/// require_client_cert), and this side's certificate and key when set. Throws
/// boost::system::system_error(errc::invalid_config) naming the field that cannot be loaded.
boost::asio::ssl::context make_tls_context(const tls_config& tls, tls_role role,
                                           const tls_field_names& names);

/// make_tls_context() on the heap, for a context several clients share (and for callers that
/// should not include OpenSSL).
std::shared_ptr<boost::asio::ssl::context> make_shared_tls_context(const tls_config& tls,
                                                                   tls_role role,
                                                                   const tls_field_names& names);

}  // namespace s3lect::detail
