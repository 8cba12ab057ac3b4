// Public key pins of certificates (zero-configuration peer TLS, docs/peer-mode.md): how a
// follower checks that the leader it reached is the one the lock record names.
#pragma once

#include <openssl/types.h>

#include <string>

namespace s3lect::inline v1::detail {

/// "sha256:" and the lowercase hex SHA-256 of `certificate`'s DER SubjectPublicKeyInfo; empty
/// when it has no usable key.
std::string public_key_pin(X509* certificate);

}  // namespace s3lect::inline v1::detail
