// The one place an OpenSSL context is built from a tls_config, for every TLS endpoint s3lect
// has: the S3 client, the peer client, the health server.
#pragma once

#include <s3lect/tls.hpp>

#include <memory>
#include <string_view>

// Declared only: the HTTP client's header names the context type without pulling in OpenSSL.
namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace s3lect::inline v1::detail {

/// Which end of the connection the context is for.
enum class tls_role { client, server };

/// A context for `role` that speaks TLS 1.3, and TLS 1.2 with ECDHE and AEAD suites only: the
/// trusted CAs (a client without any trusts the system's; a server with some verifies client
/// certificates, and requires one with require_client_cert), and this side's certificate and key
/// when set. Throws boost::system::system_error(errc::invalid_config) naming the field that cannot
/// be loaded, after `field_prefix` (how the enclosing configuration names its tls_config: "tls.",
/// "health_server_config.tls.").
boost::asio::ssl::context make_tls_context(const tls_config& tls, tls_role role,
                                           std::string_view field_prefix);

/// make_tls_context() on the heap, for a context several clients share (and for callers that
/// should not include OpenSSL).
std::shared_ptr<boost::asio::ssl::context> make_shared_tls_context(const tls_config& tls,
                                                                   tls_role role,
                                                                   std::string_view field_prefix);

}  // namespace s3lect::inline v1::detail
