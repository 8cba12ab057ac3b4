// A candidate's registration object (docs/peer-mode.md#claims-that-cannot-be-forged): written by
// each peer-mode elector next to the lock, read by the leader to verify a claim. Only a node that
// may write the bucket can make one, and it holds only a hash of the claimant's token, so
// reading the bucket does not let anyone forge a claim. Pure functions.
#pragma once

#include "candidate_registry.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Bytes a registration key adds to the lock key: ".candidates/" and 32 hex digits, plus one to
/// spare. A lock key longer than 1024 minus this leaves no room in S3's 1024-byte keys.
inline constexpr std::size_t registration_key_overhead = 45;

/// `<lock_key>.candidates/<first 32 hex digits of SHA-256(server_id)>`.
std::string registration_key(std::string_view lock_key, std::string_view server_id);

/// {"id":server_id,"priority":priority,"tokenSha256":SHA-256 hex of token}.
std::string registration_body(std::string_view server_id, std::int32_t priority,
                              std::string_view token);

/// What the registration object `body` (nullopt: absent) says of the claim `checked`: a member
/// when it names the claimed id and the token's hash, with a priority in range.
registration_verdict judge_registration(const std::optional<std::string>& body,
                                        const candidate_verification& checked);

}  // namespace s3lect::inline v1::detail
