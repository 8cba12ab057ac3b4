// SHA-256 and hex: request signing (aws) and the candidate registrations (election) both hash.
#pragma once

#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Lower-case hex SHA-256 of `data`; throws std::runtime_error only if libcrypto fails.
std::string sha256_hex(std::string_view data);

/// Lower-case hex of arbitrary bytes.
std::string to_hex(std::string_view bytes);

}  // namespace s3lect::inline v1::detail
