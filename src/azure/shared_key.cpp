#include "shared_key.hpp"

#include "sigv4.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

namespace s3lect::inline v1::detail {
namespace {

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The value of the first header named `name` (case-insensitive), or an empty view.
std::string_view header_value(const shared_key_request& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (lowered(key) == name) return value;
  }
  return {};
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  out.resize(written < 0 ? 0 : static_cast<std::size_t>(written));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t size = static_cast<std::size_t>(written);
  if (text.ends_with("==")) {
    size -= 2;
  } else if (text.ends_with('=')) {
    size -= 1;
  }
  out.resize(size);
  return out;
}

std::string shared_key_string_to_sign(const shared_key_request& request, std::string_view account) {
  // The standard headers in the order the reference fixes. Date stays empty: x-ms-date is sent.
  static constexpr std::array<std::string_view, 11> standard = {"content-encoding",
                                                                "content-language",
                                                                "content-length",
                                                                "content-md5",
                                                                "content-type",
                                                                "date",
                                                                "if-modified-since",
                                                                "if-match",
                                                                "if-none-match",
                                                                "if-unmodified-since",
                                                                "range"};
  std::string out = request.method + "\n";
  for (const std::string_view name : standard) {
    if (name == "content-length") {
      if (request.content_length > 0) out += std::to_string(request.content_length);
    } else {
      out += trimmed(header_value(request, name));
    }
    out += '\n';
  }
  std::vector<std::pair<std::string, std::string_view>> ms_headers;
  for (const auto& [name, value] : request.headers) {
    std::string lower = lowered(name);
    if (lower.starts_with("x-ms-")) ms_headers.emplace_back(std::move(lower), trimmed(value));
  }
  std::sort(ms_headers.begin(), ms_headers.end());
  for (const auto& [name, value] : ms_headers) {
    out += name;
    out += ':';
    out += value;
    out += '\n';
  }
  out += '/';
  out += account;
  out += request.path;
  // No parameter is repeated in s3lect's requests, so none needs its values joined by ','.
  std::vector<std::pair<std::string, std::string_view>> query;
  for (const auto& [name, value] : request.query) query.emplace_back(lowered(name), value);
  std::sort(query.begin(), query.end());
  for (const auto& [name, value] : query) {
    out += '\n';
    out += name;
    out += ':';
    out += value;
  }
  return out;
}

std::string shared_key_authorization(const shared_key_request& request, std::string_view account,
                                     std::string_view decoded_key) {
  const std::string signature =
      base64_encode(hmac_sha256(decoded_key, shared_key_string_to_sign(request, account)));
  return "SharedKey " + std::string(account) + ":" + signature;
}

}  // namespace s3lect::inline v1::detail
