#include "tls_verify.hpp"

#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

namespace s3lect::inline v1::detail {

bool verify_host::operator()(bool preverified, boost::asio::ssl::verify_context& context) const {
  if (check_(preverified, context)) return true;
  if (preverified) {
    X509_STORE_CTX_set_error(context.native_handle(), is_ip_ ? X509_V_ERR_IP_ADDRESS_MISMATCH
                                                             : X509_V_ERR_HOSTNAME_MISMATCH);
  }
  return false;
}

errc classify_handshake_error(const boost::system::error_code& ec, SSL* ssl, std::string& detail) {
  const long verify_result = SSL_get_verify_result(ssl);
  const bool verify_reason =
      ec.category() == boost::asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED;
  if (verify_result != X509_V_OK || verify_reason) {
    detail = X509_verify_cert_error_string(verify_result);
    return errc::tls_verification_failed;
  }
  detail = ec.message();
  return errc::tls_handshake_failed;
}

}  // namespace s3lect::inline v1::detail
