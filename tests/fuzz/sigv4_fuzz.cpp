// Fuzzes SigV4 canonicalisation: uri_encode, s3_object_path, the canonical request (query and
// header canonicalisation), the string to sign, the Authorization header and format_amz_date.
//
// Input: an HTTP request in the form of the AWS SigV4 test suite's .req files:
//   GET /path?Param1=value1 HTTP/1.1      method, target (the path verbatim as canonical URI, the
//   Host:example.amazonaws.com            query split at '&' and '=' and percent-decoded), then
//   X-Amz-Date:20150830T123600Z           headers "Name:value" (a line starting with a space or
//                                         tab continues the previous value), a blank line and
//   body                                  the body, whose SHA-256 is the payload hash.
// The scope and key are the test suite's: AKIDEXAMPLE, us-east-1, service "service", the
// X-Amz-Date header's value or 20150830T123600Z. The first 8 bytes, read as nanoseconds since
// the epoch, also feed format_amz_date.
//
// Seeds (corpus/sigv4/): requests of the AWS Signature Version 4 test suite (get-vanilla,
// get-vanilla-query-order-key-case, get-vanilla-query-unreserved, get-vanilla-utf8-query,
// get-header-key-duplicate, get-header-value-multiline, get-header-value-order,
// get-header-value-trim, get-space, get-utf8, post-x-www-form-urlencoded, post-vanilla-query,
// get-vanilla-with-session-token) and requests as s3lect's S3 client signs them (GET and
// conditional PUT of a lock key, path and virtual-hosted style, x-amz-content-sha256).
#include "sigv4.hpp"

#include "fuzz/fuzz_check.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono;
using namespace s3lect::detail;
using header_list = std::vector<std::pair<std::string, std::string>>;

bool is_unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// Lenient percent-decoding: a '%' not followed by two hex digits stays as it is.
std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

/// Strict decoding of uri_encode's output; nullopt if it holds anything uri_encode never writes.
std::optional<std::string> decode_encoded(std::string_view text, bool keep_slash) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out += c;
      continue;
    }
    if (c != '%' || text.size() - i < 3) return std::nullopt;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    // Upper-case hex only, and never for a byte that could have stayed as it was.
    if (high < 0 || low < 0 || (text[i + 1] >= 'a' && text[i + 1] <= 'f') ||
        (text[i + 2] >= 'a' && text[i + 2] <= 'f')) {
      return std::nullopt;
    }
    const char byte = static_cast<char>(high * 16 + low);
    if (is_unreserved(byte) || (keep_slash && byte == '/')) return std::nullopt;
    out += byte;
    i += 2;
  }
  return out;
}

void check_uri_encode(std::string_view text) {
  for (const bool keep_slash : {false, true}) {
    const std::string encoded = uri_encode(text, keep_slash);
    S3LECT_FUZZ_CHECK(encoded.size() >= text.size() && encoded.size() <= 3 * text.size());
    S3LECT_FUZZ_CHECK(decode_encoded(encoded, keep_slash) == std::string(text));
  }
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_header_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

/// The request the input describes, and its scope.
struct parsed_request {
  sigv4_request request;
  sigv4_scope scope{"20150830T123600Z", "us-east-1", "service"};
  std::string target;
};

parsed_request parse_request(std::string_view input) {
  parsed_request parsed;
  sigv4_request& request = parsed.request;
  const auto line_end = [&input] {
    const auto newline = input.find('\n');
    std::string_view line = input.substr(0, newline);
    input = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
  };

  std::string_view request_line = line_end();
  const auto first_space = request_line.find(' ');
  request.method = std::string(request_line.substr(0, first_space));
  if (first_space != std::string_view::npos) {
    std::string_view target = request_line.substr(first_space + 1);
    // "GET /example space/ HTTP/1.1": the target runs to the last space.
    if (const auto last_space = target.rfind(' '); last_space != std::string_view::npos) {
      target = target.substr(0, last_space);
    }
    parsed.target = std::string(target);
    const auto question = target.find('?');
    request.canonical_uri = std::string(target.substr(0, question));
    if (question != std::string_view::npos) {
      for (const std::string_view pair : split(target.substr(question + 1), '&')) {
        const auto equals = pair.find('=');
        request.query.emplace_back(percent_decode(pair.substr(0, equals)),
                                   equals == std::string_view::npos
                                       ? std::string{}
                                       : percent_decode(pair.substr(equals + 1)));
      }
    }
  }

  while (!input.empty()) {
    const std::string_view line = line_end();
    if (line.empty()) break;
    if ((line.front() == ' ' || line.front() == '\t') && !request.headers.empty()) {
      request.headers.back().second += '\n';
      request.headers.back().second += line;
      continue;
    }
    const auto colon = line.find(':');
    request.headers.emplace_back(
        std::string(line.substr(0, colon)),
        colon == std::string_view::npos ? std::string{} : std::string(line.substr(colon + 1)));
    if (ascii_lower(request.headers.back().first) == "x-amz-date") {
      parsed.scope.amz_date = request.headers.back().second;
    }
  }
  request.payload_hash = sha256_hex(input);
  return parsed;
}

/// The canonical request has the shape of SigV4 task 1, built from exactly this request.
void check_canonical_request(const sigv4_request& request, const std::string& canonical) {
  const std::vector<std::string_view> lines = split(canonical, '\n');
  S3LECT_FUZZ_CHECK(lines.size() >= 6);
  S3LECT_FUZZ_CHECK(lines[0] == request.method);
  S3LECT_FUZZ_CHECK(lines[1] == (request.canonical_uri.empty() ? "/" : request.canonical_uri));

  // Query: every parameter once, encoded, sorted by name then value.
  const std::string_view query = lines[2];
  if (request.query.empty()) {
    S3LECT_FUZZ_CHECK(query.empty());
  } else {
    const std::vector<std::string_view> pairs = split(query, '&');
    S3LECT_FUZZ_CHECK(pairs.size() == request.query.size());
    std::vector<std::pair<std::string, std::string>> decoded;
    for (const std::string_view pair : pairs) {
      const auto equals = pair.find('=');
      S3LECT_FUZZ_CHECK(equals != std::string_view::npos);
      const auto name = decode_encoded(pair.substr(0, equals), false);
      const auto value = decode_encoded(pair.substr(equals + 1), false);
      S3LECT_FUZZ_CHECK(name && value);
      decoded.emplace_back(*name, *value);
    }
    S3LECT_FUZZ_CHECK(std::is_sorted(pairs.begin(), pairs.end(), [](auto a, auto b) {
      const auto a_name = a.substr(0, a.find('=')), b_name = b.substr(0, b.find('='));
      return a_name != b_name ? a_name < b_name : a < b;
    }));
    std::vector<std::pair<std::string, std::string>> given = request.query;
    std::sort(given.begin(), given.end());
    std::sort(decoded.begin(), decoded.end());
    S3LECT_FUZZ_CHECK(given == decoded);
  }

  // Headers: one line per distinct lower-cased name, sorted, values trimmed and collapsed and
  // joined with ',' in the order given; then a blank line, SignedHeaders and the payload hash.
  std::vector<std::string> names;
  for (const auto& [name, value] : request.headers) names.push_back(ascii_lower(name));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  S3LECT_FUZZ_CHECK(lines.size() == 3 + names.size() + 3);
  std::string signed_headers;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view line = lines[3 + i];
    S3LECT_FUZZ_CHECK(line.starts_with(names[i] + ":"));
    const std::string_view value = line.substr(names[i].size() + 1);
    S3LECT_FUZZ_CHECK(value.find("  ") == std::string_view::npos);
    S3LECT_FUZZ_CHECK(std::none_of(value.begin(), value.end(),
                                   [](char c) { return is_header_space(c) && c != ' '; }));
    std::size_t given_bytes = 0;
    std::size_t count = 0;
    for (const auto& [name, given] : request.headers) {
      if (ascii_lower(name) != names[i]) continue;
      given_bytes += given.size();
      ++count;
    }
    S3LECT_FUZZ_CHECK(std::count(value.begin(), value.end(), ',') >= static_cast<long>(count - 1));
    S3LECT_FUZZ_CHECK(value.size() <= given_bytes + count - 1);
    if (count == 1) {
      S3LECT_FUZZ_CHECK(value.empty() || (value.front() != ' ' && value.back() != ' '));
    }
    if (!signed_headers.empty()) signed_headers += ';';
    signed_headers += names[i];
  }
  S3LECT_FUZZ_CHECK(lines[3 + names.size()].empty());
  S3LECT_FUZZ_CHECK(lines[4 + names.size()] == signed_headers);
  S3LECT_FUZZ_CHECK(lines[5 + names.size()] == request.payload_hash);
}

bool is_lower_hex(std::string_view text, std::size_t size) {
  return text.size() == size && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

void check_amz_date(std::int64_t nanoseconds_since_epoch) {
  const system_clock::time_point when{
      duration_cast<system_clock::duration>(nanoseconds{nanoseconds_since_epoch})};
  const std::string text = format_amz_date(when);
  S3LECT_FUZZ_CHECK(text.size() == 16 && text[8] == 'T' && text[15] == 'Z');
  int fields[6] = {};
  const std::size_t offsets[6] = {0, 4, 6, 9, 11, 13};
  const std::size_t widths[6] = {4, 2, 2, 2, 2, 2};
  for (int i = 0; i < 6; ++i) {
    for (std::size_t k = 0; k < widths[i]; ++k) {
      const char c = text[offsets[i] + k];
      S3LECT_FUZZ_CHECK(c >= '0' && c <= '9');
      fields[i] = fields[i] * 10 + (c - '0');
    }
  }
  const sys_seconds read_back = sys_days{year{fields[0]} / fields[1] / fields[2]} +
                                hours{fields[3]} + minutes{fields[4]} + seconds{fields[5]};
  S3LECT_FUZZ_CHECK(read_back == floor<seconds>(when));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (size >= 8) {
    std::int64_t nanoseconds_since_epoch = 0;
    std::memcpy(&nanoseconds_since_epoch, data, sizeof nanoseconds_since_epoch);
    check_amz_date(nanoseconds_since_epoch);
  }

  const parsed_request parsed = parse_request(input);
  const sigv4_request& request = parsed.request;
  check_uri_encode(parsed.target);
  for (const auto& [name, value] : request.query) {
    check_uri_encode(name);
    check_uri_encode(value);
  }

  // An object path reads back as bucket and key.
  const std::string path = s3_object_path(request.method, parsed.target);
  S3LECT_FUZZ_CHECK(path.starts_with('/'));
  std::string_view key_part = std::string_view(path).substr(1);
  if (!request.method.empty()) {
    // The bucket is encoded whole ('/' too), so it ends at the next '/'.
    const auto slash = key_part.find('/');
    S3LECT_FUZZ_CHECK(slash != std::string_view::npos);
    S3LECT_FUZZ_CHECK(decode_encoded(key_part.substr(0, slash), false) == request.method);
    key_part.remove_prefix(slash + 1);
  }
  S3LECT_FUZZ_CHECK(decode_encoded(key_part, true) == parsed.target);

  const std::string canonical = canonical_request(request);
  check_canonical_request(request, canonical);

  // The order of query parameters does not matter, nor that of headers of different names.
  sigv4_request reordered = request;
  std::reverse(reordered.query.begin(), reordered.query.end());
  std::stable_sort(
      reordered.headers.begin(), reordered.headers.end(),
      [](const auto& a, const auto& b) { return ascii_lower(a.first) > ascii_lower(b.first); });
  S3LECT_FUZZ_CHECK(canonical_request(reordered) == canonical);

  // Canonical values are a fixed point.
  sigv4_request canonical_again = request;
  for (auto& [name, value] : canonical_again.headers) {
    std::string collapsed;
    bool pending = false;
    for (const char c : value) {
      if (is_header_space(c)) {
        pending = !collapsed.empty();
        continue;
      }
      if (pending) collapsed += ' ';
      pending = false;
      collapsed += c;
    }
    name = ascii_lower(name);
    value = collapsed;
  }
  S3LECT_FUZZ_CHECK(canonical_request(canonical_again) == canonical);

  const sigv4_key key{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
  const std::string to_sign = string_to_sign(parsed.scope, canonical);
  const std::vector<std::string_view> to_sign_lines = split(to_sign, '\n');
  S3LECT_FUZZ_CHECK(to_sign_lines.size() >= 4);
  S3LECT_FUZZ_CHECK(to_sign_lines.front() == "AWS4-HMAC-SHA256");
  S3LECT_FUZZ_CHECK(is_lower_hex(to_sign_lines.back(), 64));
  S3LECT_FUZZ_CHECK(to_sign_lines.back() == sha256_hex(canonical));

  const std::string signed_by = signature(key, parsed.scope, to_sign);
  S3LECT_FUZZ_CHECK(is_lower_hex(signed_by, 64));
  const std::string authorization = authorization_header(key, parsed.scope, request);
  const std::vector<std::string_view> canonical_lines = split(canonical, '\n');
  const std::string expected =
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/" + parsed.scope.amz_date.substr(0, 8) +
      "/us-east-1/service/" +
      "aws4_request, SignedHeaders=" + std::string(canonical_lines[canonical_lines.size() - 2]) +
      ", Signature=" + signed_by;
  S3LECT_FUZZ_CHECK(authorization == expected);
  return 0;
}
