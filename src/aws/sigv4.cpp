#include "sigv4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace s3lect::inline v1::detail {
namespace {

constexpr std::string_view signing_algorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view scope_terminator = "aws4_request";

/// A pointer OpenSSL accepts even for empty input (a default string_view's data() is null).
const unsigned char* bytes_of(std::string_view s) {
  static constexpr unsigned char no_bytes[1] = {0};
  return s.empty() ? no_bytes : reinterpret_cast<const unsigned char*>(s.data());
}

/// True for the whitespace SigV4 trims and collapses in header values (a folded value's CR/LF too).
bool is_header_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/// ASCII lower-casing; header names are ASCII tokens, so locale must not play a part.
std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// SigV4 "Trimall": no leading/trailing whitespace, each inner run of it becomes one space.
std::string trim_and_collapse(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (is_header_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

/// The canonical headers block and the matching SignedHeaders list, built together.
struct canonical_headers_parts {
  std::string block;           // "name:value\n" per distinct name, sorted
  std::string signed_headers;  // "name1;name2;..."
};

/// Lower-cases, trims, sorts (stably, so repeated names keep their order) and merges headers.
canonical_headers_parts make_canonical_headers(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> normalised;
  normalised.reserve(headers.size());
  for (const auto& [name, value] : headers) {
    normalised.emplace_back(ascii_lower(name), trim_and_collapse(value));
  }
  std::stable_sort(normalised.begin(), normalised.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  canonical_headers_parts parts;
  for (std::size_t i = 0; i < normalised.size(); ++i) {
    const bool same_as_previous = i > 0 && normalised[i].first == normalised[i - 1].first;
    if (same_as_previous) {
      parts.block.back() = ',';  // replace the previous line's '\n': "name:v1,v2\n"
    } else {
      parts.block += normalised[i].first;
      parts.block += ':';
      if (!parts.signed_headers.empty()) parts.signed_headers += ';';
      parts.signed_headers += normalised[i].first;
    }
    parts.block += normalised[i].second;
    parts.block += '\n';
  }
  return parts;
}

/// Encodes every name and value, then sorts by encoded name and value, as SigV4 requires.
std::string make_canonical_query(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(uri_encode(name, false), uri_encode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

/// The "YYYYMMDD" that starts an amz_date; scope and signing key use the day only.
std::string_view scope_day(const sigv4_scope& scope) {
  return std::string_view(scope.amz_date).substr(0, 8);
}

/// "<day>/<region>/<service>/aws4_request".
std::string credential_scope(const sigv4_scope& scope) {
  std::string out(scope_day(scope));
  out += '/';
  out += scope.region;
  out += '/';
  out += scope.service;
  out += '/';
  out += scope_terminator;
  return out;
}

/// The canonical request together with its SignedHeaders list, which the header repeats.
struct canonical_request_parts {
  std::string text;
  std::string signed_headers;
};

/// Builds the canonical request once for both canonical_request() and authorization_header().
canonical_request_parts make_canonical_request(const sigv4_request& request) {
  canonical_headers_parts headers = make_canonical_headers(request.headers);
  std::string out = request.method;
  out += '\n';
  out += request.canonical_uri.empty() ? std::string("/") : request.canonical_uri;
  out += '\n';
  out += make_canonical_query(request.query);
  out += '\n';
  out += headers.block;  // each line already ends in '\n'
  out += '\n';
  out += headers.signed_headers;
  out += '\n';
  out += request.payload_hash;
  return {std::move(out), std::move(headers.signed_headers)};
}

/// Derives the per-day, per-region, per-service signing key from the secret.
std::string signing_key(const sigv4_key& key, const sigv4_scope& scope) {
  const std::string date_key = hmac_sha256("AWS4" + key.secret_access_key, scope_day(scope));
  const std::string region_key = hmac_sha256(date_key, scope.region);
  const std::string service_key = hmac_sha256(region_key, scope.service);
  return hmac_sha256(service_key, scope_terminator);
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  if (HMAC(EVP_sha256(), bytes_of(key), static_cast<int>(key.size()), bytes_of(data), data.size(),
           mac, &mac_size) == nullptr) {
    throw std::runtime_error("s3lect: HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(mac), mac_size);
}

std::string s3_object_path(std::string_view bucket, std::string_view key) {
  std::string path = "/";
  if (!bucket.empty()) {
    path += uri_encode(bucket, false);
    path += '/';
  }
  path += uri_encode(key, true);
  return path;
}

std::string canonical_request(const sigv4_request& request) {
  return make_canonical_request(request).text;
}

std::string string_to_sign(const sigv4_scope& scope, std::string_view canonical_request) {
  std::string out(signing_algorithm);
  out += '\n';
  out += scope.amz_date;
  out += '\n';
  out += credential_scope(scope);
  out += '\n';
  out += sha256_hex(canonical_request);
  return out;
}

std::string signature(const sigv4_key& key, const sigv4_scope& scope,
                      std::string_view string_to_sign) {
  return to_hex(hmac_sha256(signing_key(key, scope), string_to_sign));
}

std::string authorization_header(const sigv4_key& key, const sigv4_scope& scope,
                                 const sigv4_request& request) {
  const canonical_request_parts canonical = make_canonical_request(request);
  const std::string to_sign = string_to_sign(scope, canonical.text);
  std::string out(signing_algorithm);
  out += " Credential=";
  out += key.access_key_id;
  out += '/';
  out += credential_scope(scope);
  out += ", SignedHeaders=";
  out += canonical.signed_headers;
  out += ", Signature=";
  out += signature(key, scope, to_sign);
  return out;
}

std::string format_amz_date(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const auto second = floor<seconds>(when);
  const auto day = floor<days>(second);
  const year_month_day date{day};
  const hh_mm_ss time{second - day};
  char text[64];
  std::snprintf(text, sizeof text, "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return text;
}

}  // namespace s3lect::inline v1::detail
