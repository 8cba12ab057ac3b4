#include "sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace s3lect::inline v1::detail {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (EVP_Digest(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest,
                 &digest_size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("s3lect: EVP_Digest(SHA-256) failed");
  }
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest), digest_size));
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 0x0f];
  }
  return out;
}

}  // namespace s3lect::inline v1::detail
