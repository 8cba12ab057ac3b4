#include "certificate_names.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

namespace s3lect::inline v1::detail {

namespace {

/// `text` as a string, or nothing if it holds a NUL (a name that would compare as another).
void add_name(std::vector<std::string>& names, const ASN1_STRING* text) {
  if (text == nullptr) return;
  const auto* data = reinterpret_cast<const char*>(ASN1_STRING_get0_data(text));
  const std::string name(data, static_cast<std::size_t>(ASN1_STRING_length(text)));
  if (name.find('\0') == std::string::npos && !name.empty()) names.push_back(name);
}

void add_alternative_names(std::vector<std::string>& names, X509* certificate) {
  const auto free_names = [](GENERAL_NAMES* list) { GENERAL_NAMES_free(list); };
  const std::unique_ptr<GENERAL_NAMES, decltype(free_names)> list(
      static_cast<GENERAL_NAMES*>(
          X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)),
      free_names);
  if (!list) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(list.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(list.get(), i);
    if (name->type == GEN_DNS) add_name(names, name->d.dNSName);
    if (name->type == GEN_URI) add_name(names, name->d.uniformResourceIdentifier);
  }
}

void add_common_names(std::vector<std::string>& names, X509* certificate) {
  const X509_NAME* subject = X509_get_subject_name(certificate);
  if (subject == nullptr) return;
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    add_name(names, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
  }
}

}  // namespace

std::vector<std::string> certificate_names(x509_st* certificate) {
  std::vector<std::string> names;
  add_alternative_names(names, certificate);
  add_common_names(names, certificate);
  return names;
}

std::vector<std::string> peer_certificate_names(ssl_st* ssl) {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr) return {};
  return certificate_names(certificate);
}

bool certificate_names_id(const std::vector<std::string>& names, std::string_view id) {
  if (id.empty()) return false;
  return std::any_of(names.begin(), names.end(), [id](const std::string& name) {
    return name == id && name.find('*') == std::string::npos;
  });
}

}  // namespace s3lect::inline v1::detail
