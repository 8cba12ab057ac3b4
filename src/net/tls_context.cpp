#include "tls_context.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/system_error.hpp>

#include <openssl/ssl.h>

namespace s3lect::inline v1::detail {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;

namespace {

[[noreturn]] void throw_config(std::string_view prefix, std::string_view field,
                               const std::string& problem) {
  std::string message(prefix);
  message += field;
  message += ": " + problem;
  throw boost::system::system_error(errc::invalid_config, message);
}

void load_or_throw(const error_code& ec, std::string_view prefix, std::string_view field,
                   const std::string& source) {
  if (ec) throw_config(prefix, field, "cannot load '" + source + "': " + ec.message());
}

void load_trusted_cas(ssl::context& context, const tls_config& tls, tls_role role,
                      std::string_view prefix) {
  error_code ec;
  if (role == tls_role::client && tls.ca_file.empty() && tls.ca_pem.empty()) {
    context.set_default_verify_paths(ec);
    load_or_throw(ec, prefix, "ca_file", "the system's default CA certificates");
  }
  if (!tls.ca_file.empty()) {
    context.load_verify_file(tls.ca_file, ec);
    load_or_throw(ec, prefix, "ca_file", tls.ca_file);
  }
  if (!tls.ca_pem.empty()) {
    context.add_certificate_authority(asio::buffer(tls.ca_pem), ec);
    load_or_throw(ec, prefix, "ca_pem", "PEM text");
  }
}

/// This side's certificate and key; OpenSSL checks that they match as the key is loaded.
void load_own_identity(ssl::context& context, const tls_config& tls, std::string_view prefix) {
  error_code ec;
  if (!tls.certificate_file.empty()) {
    context.use_certificate_chain_file(tls.certificate_file, ec);
    load_or_throw(ec, prefix, "certificate_file", tls.certificate_file);
  } else {
    context.use_certificate_chain(asio::buffer(tls.certificate_pem), ec);
    load_or_throw(ec, prefix, "certificate_pem", "PEM text");
  }
  if (!tls.private_key_file.empty()) {
    context.use_private_key_file(tls.private_key_file, ssl::context::pem, ec);
    load_or_throw(ec, prefix, "private_key_file", tls.private_key_file);
  } else {
    context.use_private_key(asio::buffer(tls.private_key_pem), ssl::context::pem, ec);
    load_or_throw(ec, prefix, "private_key_pem", "PEM text");
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    throw_config(prefix, "private_key", "does not match the certificate");
  }
}

void set_client_verification(ssl::context& context, const tls_config& tls) {
  if (tls.ca_file.empty() && tls.ca_pem.empty()) {
    context.set_verify_mode(ssl::verify_none);
    return;
  }
  context.set_verify_mode(ssl::verify_peer |
                          (tls.require_client_cert ? ssl::verify_fail_if_no_peer_cert : 0));
  // OpenSSL refuses to resume sessions of a verifying server that has no session id context.
  static constexpr unsigned char session_context[] = "s3lect-health";
  SSL_CTX_set_session_id_context(context.native_handle(), session_context,
                                 sizeof session_context - 1);
}

/// Mozilla's "intermediate" profile without its DHE suites: TLS 1.3 with OpenSSL's default
/// suites (all AEAD), and TLS 1.2 only with ECDHE key exchange (forward secrecy) and an AEAD
/// cipher. CBC suites (padding oracles, Lucky13) and RSA key exchange (no forward secrecy) are
/// refused by servers and never offered by clients. Every S3 store and every s3lect node
/// supports these. A server picks by its own order, so that a client cannot steer it to the
/// weakest suite both sides have.
void restrict_to_modern_ciphers(ssl::context& context, tls_role role) {
  static constexpr const char* tls12_ciphers =
      "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(context.native_handle(), tls12_ciphers) != 1) {
    throw boost::system::system_error(errc::invalid_config,
                                      "this OpenSSL knows none of the TLS 1.2 AEAD suites");
  }
  if (role == tls_role::server) {
    SSL_CTX_set_options(context.native_handle(), SSL_OP_CIPHER_SERVER_PREFERENCE);
  }
}

}  // namespace

ssl::context make_tls_context(const tls_config& tls, tls_role role, std::string_view prefix) {
  const bool server = role == tls_role::server;
  ssl::context context(server ? ssl::context::tls_server : ssl::context::tls_client);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                      (server ? ssl::context::single_dh_use : 0));
  restrict_to_modern_ciphers(context, role);
  // Without a callback OpenSSL would prompt on the terminal for an encrypted key's password.
  context.set_password_callback(
      [](std::size_t, ssl::context::password_purpose) { return std::string(); });
  if (server) {
    load_own_identity(context, tls, prefix);
    load_trusted_cas(context, tls, role, prefix);
    set_client_verification(context, tls);
    return context;
  }
  if (!tls.verify_peer) {
    context.set_verify_mode(ssl::verify_none);
  } else {
    context.set_verify_mode(ssl::verify_peer);
    load_trusted_cas(context, tls, role, prefix);
  }
  if (!tls.certificate_file.empty() || !tls.certificate_pem.empty()) {
    load_own_identity(context, tls, prefix);
  }
  return context;
}

std::shared_ptr<ssl::context> make_shared_tls_context(const tls_config& tls, tls_role role,
                                                      std::string_view prefix) {
  return std::make_shared<ssl::context>(make_tls_context(tls, role, prefix));
}

}  // namespace s3lect::inline v1::detail
