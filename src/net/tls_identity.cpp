// The self-signed identity of zero-configuration peer TLS and public key pins (OpenSSL only).
#include "tls_identity.hpp"

#include <s3lect/error.hpp>
#include <s3lect/tls.hpp>

#include <boost/system/system_error.hpp>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <array>
#include <cstdio>
#include <memory>

namespace s3lect::inline v1 {
namespace detail {
namespace {

struct openssl_free {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* certificate) const { X509_free(certificate); }
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using key_ptr = std::unique_ptr<EVP_PKEY, openssl_free>;
using certificate_ptr = std::unique_ptr<X509, openssl_free>;
using bio_ptr = std::unique_ptr<BIO, openssl_free>;

[[noreturn]] void fail(const char* what) {
  throw boost::system::system_error(errc::invalid_config,
                                    std::string("zero-configuration TLS: cannot ") + what);
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

/// A certificate for `key` signed by itself. Followers check only its key (the pin), never its
/// names or dates, so it names the program and outlives any process that could hold it.
certificate_ptr self_sign(EVP_PKEY* key) {
  certificate_ptr certificate(X509_new());
  if (!certificate) fail("allocate a certificate");
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), serial.size()) != 1) fail("draw a serial number");
  serial[0] &= 0x7f;  // a positive INTEGER
  BIGNUM* number = BN_bin2bn(serial.data(), serial.size(), nullptr);
  const bool serial_set =
      number && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate.get())) != nullptr;
  BN_free(number);
  X509_NAME* name = X509_get_subject_name(certificate.get());
  const bool built =
      serial_set && X509_set_version(certificate.get(), 2) == 1 &&
      X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 10L * 365 * 24 * 3600) != nullptr &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("s3lect peer"), -1, -1,
                                 0) == 1 &&
      X509_set_issuer_name(certificate.get(), name) == 1 &&
      X509_set_pubkey(certificate.get(), key) == 1 &&
      X509_sign(certificate.get(), key, EVP_sha256()) > 0;
  if (!built) fail("build the self-signed certificate");
  return certificate;
}

}  // namespace

std::string public_key_pin(X509* certificate) {
  if (certificate == nullptr) return {};
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(X509_get0_pubkey(certificate), &der);
  if (size <= 0) return {};
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_size = 0;
  const bool hashed = EVP_Digest(der, static_cast<std::size_t>(size), digest.data(), &digest_size,
                                 EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  if (!hashed) return {};
  std::string pin = "sha256:";
  for (unsigned int i = 0; i < digest_size; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    pin += hex;
  }
  return pin;
}

}  // namespace detail

self_signed_identity make_self_signed_identity() {
  detail::key_ptr key(EVP_EC_gen("P-256"));
  if (!key) detail::fail("generate an EC P-256 key");
  detail::certificate_ptr certificate = detail::self_sign(key.get());
  detail::bio_ptr certificate_text(BIO_new(BIO_s_mem()));
  detail::bio_ptr key_text(BIO_new(BIO_s_mem()));
  if (!certificate_text || !key_text ||
      PEM_write_bio_X509(certificate_text.get(), certificate.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_text.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    detail::fail("encode the key and certificate as PEM");
  }
  return {detail::bio_text(certificate_text.get()), detail::bio_text(key_text.get()),
          detail::public_key_pin(certificate.get())};
}

std::string adopt_self_signed_identity(tls_config& tls) {
  if (!tls.certificate_file.empty() || !tls.certificate_pem.empty() ||
      !tls.private_key_file.empty() || !tls.private_key_pem.empty()) {
    return {};
  }
  self_signed_identity identity = make_self_signed_identity();
  tls.certificate_pem = std::move(identity.certificate_pem);
  tls.private_key_pem = std::move(identity.private_key_pem);
  return std::move(identity.key_pin);
}

std::string public_key_pin(std::string_view certificate_pem) {
  detail::bio_ptr bio(
      BIO_new_mem_buf(certificate_pem.data(), static_cast<int>(certificate_pem.size())));
  if (!bio) return {};
  detail::certificate_ptr certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  return detail::public_key_pin(certificate.get());
}

}  // namespace s3lect::inline v1
