// Throwaway certificates generated at test time with OpenSSL 3 (no files in the repository to
// expire): a CA, and server and client certificates it signs, valid for 127.0.0.1 and
// localhost. Call make_test_pki() twice for two unrelated CAs. EC P-256 keys: generating one
// takes about a millisecond.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace s3lect::test {

/// A certificate and its private key, both PEM.
struct pem_pair {
  std::string certificate;
  std::string private_key;
};

/// A CA and certificates signed by it.
struct test_pki {
  pem_pair ca;
  pem_pair server;          ///< SAN IP:127.0.0.1, DNS:localhost; serverAuth.
  pem_pair client;          ///< clientAuth.
  pem_pair expired_server;  ///< Like server, but its validity ended yesterday.
  pem_pair other_server;    ///< Valid, but for DNS:other.example only: a host-name mismatch.
};

namespace certificate_detail {

struct pkey_free {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct x509_free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct bio_free {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;
using bio_ptr = std::unique_ptr<BIO, bio_free>;

inline void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificate: ") + what + " failed");
}

inline pkey_ptr make_key() {
  pkey_ptr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  check(key != nullptr, "EVP_PKEY_Q_keygen");
  return key;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  check(extension != nullptr, "X509V3_EXT_conf_nid");
  const int added = X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
  check(added == 1, "X509_add_ext");
}

/// A certificate for `key` named `common_name`, signed by `issuer` (self-signed when null),
/// valid from `not_before_days` to `not_after_days` relative to now.
inline x509_ptr make_certificate(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                                 EVP_PKEY* issuer_key, bool is_ca, const char* extended_usage,
                                 long not_before_days, long not_after_days,
                                 const char* subject_alt_names = "IP:127.0.0.1,DNS:localhost") {
  static long next_serial = 1;
  x509_ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
  check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), next_serial++) == 1, "serial");
  constexpr long day = 24 * 60 * 60;
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), not_before_days * day) != nullptr,
        "notBefore");
  check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), not_after_days * day) != nullptr,
        "notAfter");
  check(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                   -1, 0) == 1,
        "subject");
  X509* signer = issuer != nullptr ? issuer : cert.get();
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) == 1, "issuer");
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (is_ca) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_authority_key_identifier, "keyid");
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    add_extension(cert.get(), signer, NID_ext_key_usage, extended_usage);
    add_extension(cert.get(), signer, NID_subject_alt_name, subject_alt_names);
  }
  check(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0,
        "X509_sign");
  return cert;
}

inline std::string drain(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

inline pem_pair to_pem(X509* cert, EVP_PKEY* key) {
  bio_ptr cert_bio(BIO_new(BIO_s_mem()));
  bio_ptr key_bio(BIO_new(BIO_s_mem()));
  check(cert_bio && key_bio, "BIO_new");
  check(PEM_write_bio_X509(cert_bio.get(), cert) == 1, "PEM_write_bio_X509");
  check(PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  return {drain(cert_bio.get()), drain(key_bio.get())};
}

}  // namespace certificate_detail

/// A fresh CA named `name` and the certificates it signs.
inline test_pki make_test_pki(const std::string& name = "s3lect test CA") {
  using namespace certificate_detail;
  const pkey_ptr ca_key = make_key();
  const x509_ptr ca = make_certificate(ca_key.get(), name, nullptr, nullptr, true, nullptr, -1, 30);
  auto leaf = [&](const char* common_name, const char* usage, long from, long to,
                  const char* names = "IP:127.0.0.1,DNS:localhost") {
    const pkey_ptr key = make_key();
    const x509_ptr cert = make_certificate(key.get(), common_name, ca.get(), ca_key.get(), false,
                                           usage, from, to, names);
    return to_pem(cert.get(), key.get());
  };
  test_pki pki;
  pki.ca = to_pem(ca.get(), ca_key.get());
  pki.server = leaf("localhost", "serverAuth", -1, 30);
  pki.client = leaf("test client", "clientAuth", -1, 30);
  pki.expired_server = leaf("localhost", "serverAuth", -3, -1);
  pki.other_server = leaf("other.example", "serverAuth", -1, 30, "DNS:other.example");
  return pki;
}

/// The test program's PKI, made once (key generation takes milliseconds).
inline const test_pki& shared_test_pki() {
  static const test_pki instance = make_test_pki();
  return instance;
}

/// An unrelated PKI: what it issues must be refused wherever shared_test_pki() is trusted.
inline const test_pki& other_test_pki() {
  static const test_pki instance = make_test_pki("some other CA");
  return instance;
}

}  // namespace s3lect::test
