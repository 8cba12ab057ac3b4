// The names a client certificate gives its holder, for binding a peer-mode claim to the
// certificate that vouches for it (docs/peer-mode.md#claims-that-cannot-be-forged): a CA-signed
// certificate verifies a claim only for an id it names, so that a monitoring client's
// certificate (CN=monitor) cannot claim a node's id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

// OpenSSL's SSL, named without its header: the claim check (health_handler.cpp) needs only
// certificate_names_id.
struct ssl_st;   // NOLINT(readability-identifier-naming)
struct x509_st;  // NOLINT(readability-identifier-naming)

namespace s3lect::inline v1::detail {

/// `certificate`'s subject alternative names of type DNS and URI, then its subject's common
/// names. Names with an embedded NUL are left out.
std::vector<std::string> certificate_names(x509_st* certificate);

/// certificate_names of the peer's certificate on `ssl`; empty without one.
std::vector<std::string> peer_certificate_names(ssl_st* ssl);

/// True when one of `names` (peer_certificate_names) is `id`, byte for byte: ids are case
/// sensitive, so a DNS name matches only as written. Wildcards name nothing: a certificate for
/// *.example.com vouches for no particular node.
bool certificate_names_id(const std::vector<std::string>& names, std::string_view id);

}  // namespace s3lect::inline v1::detail
