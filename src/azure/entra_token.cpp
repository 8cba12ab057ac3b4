// Boost.JSON headers only: the library itself is compiled once, in record.cpp.
#include "entra_token.hpp"

#include "uri_encode.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <cstdint>
#include <optional>

namespace s3lect::inline v1::detail {
namespace {

namespace json = boost::json;
using std::chrono::system_clock;

/// The most of a server's own words repeated in an error message.
constexpr std::size_t max_quoted = 200;

/// `text` cut to max_quoted characters with control characters replaced, so a hostile or broken
/// endpoint cannot forge log lines.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, max_quoted)) {
    out += (c < ' ' || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  if (text.size() > max_quoted) out += "...";
  return out;
}

token_outcome malformed(std::string_view provider, std::string_view problem) {
  return token_failure(credentials_errc::malformed,
                       std::string(provider) + ": malformed token answer: " + std::string(problem));
}

/// A member holding whole seconds, as a JSON number or a decimal string (IMDS sends strings).
/// nullopt when absent; `error` set when present but not such a value.
std::optional<std::int64_t> seconds_member(const json::object& object, std::string_view name,
                                           std::string& error) {
  const json::value* member = object.if_contains(name);
  if (!member) return std::nullopt;
  if (member->is_int64()) return member->get_int64();
  if (member->is_uint64() && member->get_uint64() <= INT64_MAX) {
    return static_cast<std::int64_t>(member->get_uint64());
  }
  if (const json::string* text = member->if_string()) {
    std::int64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [stop, ec] = std::from_chars(text->data(), end, value);
    if (ec == std::errc() && stop == end && text->size() > 0) return value;
  }
  error = std::string(name) + " is not a whole number of seconds";
  return std::nullopt;
}

std::string string_member(const json::object& object, std::string_view name) {
  const json::value* member = object.if_contains(name);
  if (!member) return {};
  if (const json::string* text = member->if_string()) return std::string(*text);
  return {};
}

/// "HTTP 401: invalid_client: AADSTS700016 ..." from an OAuth error answer (RFC 6749 5.2).
std::string describe_refusal(unsigned http_status, std::string_view body) {
  std::string text = "the token endpoint answered HTTP " + std::to_string(http_status);
  boost::system::error_code ec;
  const json::value document = json::parse(body, ec);
  const json::object* object = ec ? nullptr : document.if_object();
  if (!object) return text;
  const std::string error = string_member(*object, "error");
  const std::string description = string_member(*object, "error_description");
  if (!error.empty()) text += ": " + printable(error);
  if (!description.empty()) text += ": " + printable(description);
  return text;
}

/// The expiry of an answer; sets `problem` when it states none or an unreadable one.
std::optional<system_clock::time_point> expiry_of(const json::object& object,
                                                  system_clock::time_point now,
                                                  std::string& problem) {
  const std::optional<std::int64_t> expires_in = seconds_member(object, "expires_in", problem);
  const std::optional<std::int64_t> expires_on = seconds_member(object, "expires_on", problem);
  if (!problem.empty()) return std::nullopt;
  // Bounded so that the time_point arithmetic cannot overflow (a year is far beyond any token).
  constexpr std::int64_t year = 365LL * 24 * 3600;
  if (expires_in) {
    if (*expires_in <= 0 || *expires_in > year) problem = "expires_in is out of range";
    if (problem.empty()) return now + std::chrono::seconds(*expires_in);
    return std::nullopt;
  }
  if (expires_on) {
    const auto when = system_clock::time_point(std::chrono::seconds(*expires_on));
    if (*expires_on <= 0 || *expires_on > 9'000'000'000LL ||
        when > now + std::chrono::seconds(year)) {
      problem = "expires_on is out of range";
      return std::nullopt;
    }
    return when;
  }
  problem = "neither expires_in nor expires_on is present";
  return std::nullopt;
}

}  // namespace

token_outcome token_failure(credentials_errc code, std::string message) {
  token_outcome outcome;
  outcome.ec = code;
  outcome.token.message = std::move(message);
  return outcome;
}

std::string workload_identity_form(std::string_view client_id, std::string_view assertion) {
  return "grant_type=client_credentials&client_id=" + uri_encode(client_id, false) +
         "&scope=" + uri_encode(storage_scope, false) + "&client_assertion_type=" +
         uri_encode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer", false) +
         "&client_assertion=" + uri_encode(assertion, false);
}

std::string workload_identity_token_url(std::string_view authority_host,
                                        std::string_view tenant_id) {
  std::string url(authority_host.empty() ? "https://login.microsoftonline.com/" : authority_host);
  if (!url.ends_with('/')) url += '/';
  return url + uri_encode(tenant_id, false) + "/oauth2/v2.0/token";
}

std::string managed_identity_query(std::string_view api_version, std::string_view client_id) {
  std::string query = "api-version=" + uri_encode(api_version, false) +
                      "&resource=" + uri_encode(storage_resource, false);
  if (!client_id.empty()) query += "&client_id=" + uri_encode(client_id, false);
  return query;
}

token_outcome parse_token_answer(unsigned http_status, std::string_view body,
                                 std::string_view provider, system_clock::time_point now) {
  if (http_status != 200) {
    return token_failure(credentials_errc::fetch_failed,
                         std::string(provider) + ": " + describe_refusal(http_status, body));
  }
  boost::system::error_code ec;
  const json::value document = json::parse(body, ec);
  if (ec) return malformed(provider, "not JSON (" + ec.message() + ")");
  const json::object* object = document.if_object();
  if (!object) return malformed(provider, "not a JSON object");
  const json::value* access_token = object->if_contains("access_token");
  if (!access_token) return malformed(provider, "access_token is missing");
  if (!access_token->is_string()) return malformed(provider, "access_token is not a string");

  std::string problem;
  token_outcome outcome;
  outcome.token.expires = expiry_of(*object, now, problem);
  if (!problem.empty()) return malformed(provider, problem);
  outcome.token.access_token = std::string(access_token->get_string());
  outcome.token.provider = std::string(provider);
  if (problem = token_problem(outcome.token, now); !problem.empty()) {
    return malformed(provider, problem);
  }
  return outcome;
}

std::string token_problem(const azure_token& token, system_clock::time_point now) {
  if (token.access_token.empty()) return "access_token is empty";
  for (const unsigned char c : token.access_token) {
    // A bearer token is token68 (RFC 6750): no spaces, no control characters.
    if (c <= ' ' || c >= 0x7f) return "access_token has characters a header cannot carry";
  }
  if (token.expires && *token.expires <= now) return "the token has already expired";
  return {};
}

}  // namespace s3lect::inline v1::detail
