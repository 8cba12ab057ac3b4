// The client side of TLS beyond the context (http_client.cpp): the host name check and how a
// failed handshake is reported.
#pragma once

#include <s3lect/error.hpp>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>
#include <boost/system/error_code.hpp>

#include <openssl/ssl.h>

#include <string>

namespace s3lect::inline v1::detail {

/// Asio's host_name_verification (X509_check_host, or X509_check_ip_asc for IP literals), plus
/// an X509 error on mismatch, so that the failure is reported as a verification failure with a
/// readable reason ("IP address mismatch") instead of a bare handshake error.
class verify_host {
 public:
  verify_host(const std::string& host, bool is_ip) : check_(host), is_ip_(is_ip) {}

  bool operator()(bool preverified, boost::asio::ssl::verify_context& context) const;

 private:
  boost::asio::ssl::host_name_verification check_;
  bool is_ip_;
};

/// Splits a failed handshake on `ssl` into "the certificate is not trusted"
/// (errc::tls_verification_failed) and everything else (errc::tls_handshake_failed). `detail`
/// gets OpenSSL's reason only: every reader prints it after the error's own message.
errc classify_handshake_error(const boost::system::error_code& ec, SSL* ssl, std::string& detail);

}  // namespace s3lect::inline v1::detail
