// Boost.JSON headers only: the library itself is compiled once, in record.cpp.
#include "credentials_parse.hpp"

#include "rfc3339.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <cstdint>
#include <optional>

namespace s3lect::inline v1::detail {
namespace {

namespace json = boost::json;
using std::chrono::system_clock;

/// The most of a server's own words we repeat in an error message.
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

std::optional<system_clock::time_point> to_time_point(const rfc3339_instant& instant) {
  // system_clock counts nanoseconds in 64 bits: years 1678-2262.
  constexpr std::int64_t limit = 9'000'000'000;
  if (instant.unix_seconds < -limit || instant.unix_seconds > limit) return std::nullopt;
  return system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(
      std::chrono::seconds(instant.unix_seconds) + std::chrono::nanoseconds(instant.nanoseconds)));
}

/// Parses an Expiration field; nullopt for an unreadable one.
std::optional<system_clock::time_point> parse_expiration(std::string_view text) {
  const auto instant = parse_rfc3339(text);
  if (!instant) return std::nullopt;
  return to_time_point(*instant);
}

fetch_outcome malformed(std::string_view provider, std::string_view problem) {
  return fetch_failure(credentials_errc::malformed,
                       std::string(provider) + ": malformed credentials: " + std::string(problem));
}

/// Final checks shared by all formats.
fetch_outcome accept(aws_credentials credentials, std::string_view provider,
                     system_clock::time_point now) {
  if (std::string problem = credentials_problem(credentials, now); !problem.empty()) {
    return malformed(provider, problem);
  }
  credentials.provider = std::string(provider);
  return fetch_success(std::move(credentials));
}

/// A string member; `error` set when present with another type. Absent gives "".
std::string string_member(const json::object& object, std::string_view name, std::string& error) {
  const json::value* member = object.if_contains(name);
  if (!member) return {};
  if (const json::string* text = member->if_string()) return std::string(*text);
  if (error.empty()) error = std::string(name) + " is not a string";
  return {};
}

}  // namespace

fetch_outcome parse_json_credentials(std::string_view body, std::string_view provider,
                                     system_clock::time_point now) {
  boost::system::error_code ec;
  const json::value document = json::parse(body, ec);
  if (ec) return malformed(provider, "not JSON (" + ec.message() + ")");
  const json::object* object = document.if_object();
  if (!object) return malformed(provider, "not a JSON object");

  std::string error;
  const std::string code = string_member(*object, "Code", error);
  if (!error.empty()) return malformed(provider, error);
  if (object->contains("Code") && code != "Success") {
    const std::string message = string_member(*object, "Message", error);
    std::string text = std::string(provider) + ": the endpoint answered Code " + printable(code);
    if (!message.empty()) text += ": " + printable(message);
    return fetch_failure(credentials_errc::fetch_failed, std::move(text));
  }

  aws_credentials credentials;
  credentials.access_key_id = string_member(*object, "AccessKeyId", error);
  credentials.secret_access_key = string_member(*object, "SecretAccessKey", error);
  credentials.session_token = string_member(*object, "Token", error);
  const std::string expiration = string_member(*object, "Expiration", error);
  if (!error.empty()) return malformed(provider, error);
  if (credentials.access_key_id.empty()) return malformed(provider, "AccessKeyId is missing");
  if (credentials.secret_access_key.empty()) {
    return malformed(provider, "SecretAccessKey is missing");
  }
  if (!expiration.empty()) {
    credentials.expiration = parse_expiration(expiration);
    if (!credentials.expiration) return malformed(provider, "Expiration is not an RFC 3339 time");
  }
  return accept(std::move(credentials), provider, now);
}

std::string describe_json_error(std::string_view body) {
  boost::system::error_code ec;
  const json::value document = json::parse(body, ec);
  if (ec) return {};
  const json::object* object = document.if_object();
  if (!object) return {};
  std::string error;
  std::string code = string_member(*object, "Code", error);
  if (code.empty()) code = string_member(*object, "code", error);
  std::string message = string_member(*object, "Message", error);
  if (message.empty()) message = string_member(*object, "message", error);
  std::string text = code;
  if (!code.empty() && !message.empty()) text += ": ";
  text += message;
  return printable(text);
}

std::optional<std::string_view> xml_element_content(std::string_view xml, std::string_view name) {
  const std::string open = "<" + std::string(name);
  std::size_t search = 0;
  while (search < xml.size()) {
    const std::size_t found = xml.find(open, search);
    if (found == std::string_view::npos) return std::nullopt;
    const std::size_t after = found + open.size();
    if (after >= xml.size()) return std::nullopt;
    const char next = xml[after];
    if (next == '>' || next == '/' || next == ' ' || next == '\t' || next == '\r' || next == '\n') {
      const std::size_t close = xml.find('>', after);
      if (close == std::string_view::npos) return std::nullopt;
      if (xml[close - 1] == '/') return std::string_view();  // <Name/>
      const std::size_t content_start = close + 1;
      const std::string close_tag = "</" + std::string(name) + ">";
      const std::size_t content_end = xml.find(close_tag, content_start);
      if (content_end == std::string_view::npos) return std::nullopt;
      return xml.substr(content_start, content_end - content_start);
    }
    search = after;  // a longer name with the same prefix, e.g. <CredentialsX>
  }
  return std::nullopt;
}

std::optional<std::string> xml_element_text(std::string_view xml, std::string_view name) {
  const std::optional<std::string_view> found = xml_element_content(xml, name);
  if (!found) return std::nullopt;
  std::string_view content = *found;
  if (content.starts_with("<![CDATA[") && content.ends_with("]]>")) {
    content = content.substr(9, content.size() - 12);
    return std::string(trim_space(content));
  }
  if (content.find('<') != std::string_view::npos) return std::nullopt;  // not plain text

  std::string out;
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (content[i] != '&') {
      out += content[i];
      continue;
    }
    const std::size_t semicolon = content.find(';', i);
    if (semicolon == std::string_view::npos || semicolon - i > 10) return std::nullopt;
    const std::string_view entity = content.substr(i + 1, semicolon - i - 1);
    if (entity == "amp") {
      out += '&';
    } else if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      std::uint32_t code = 0;
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
      // Credential fields are ASCII; anything else in one is not a credential.
      if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size() ||
          code == 0 || code > 0x7f) {
        return std::nullopt;
      }
      out += static_cast<char>(code);
    } else {
      return std::nullopt;
    }
    i = semicolon;
  }
  return std::string(trim_space(out));
}

fetch_outcome parse_sts_credentials(unsigned http_status, std::string_view body,
                                    std::string_view provider, system_clock::time_point now) {
  if (http_status != 200) {
    std::string text = std::string(provider) + ": STS refused AssumeRoleWithWebIdentity: HTTP " +
                       std::to_string(http_status);
    const auto code = xml_element_text(body, "Code");
    const auto message = xml_element_text(body, "Message");
    if (code && !code->empty()) text += " " + printable(*code);
    if (message && !message->empty()) text += ": " + printable(*message);
    return fetch_failure(credentials_errc::fetch_failed, std::move(text));
  }
  const auto block = xml_element_content(body, "Credentials");
  if (!block) return malformed(provider, "the STS answer has no Credentials element");
  aws_credentials credentials;
  const struct {
    std::string_view element;
    std::string* field;
    bool required;
  } fields[] = {{"AccessKeyId", &credentials.access_key_id, true},
                {"SecretAccessKey", &credentials.secret_access_key, true},
                // AWS always sends one; an STS-compatible store may not.
                {"SessionToken", &credentials.session_token, false}};
  for (const auto& [element, field, required] : fields) {
    auto text = xml_element_text(*block, element);
    if (!text && xml_element_content(*block, element)) {
      return malformed(provider, std::string(element) + " is not plain text");
    }
    if (required && (!text || text->empty())) {
      return malformed(provider, std::string(element) + " is missing or not plain text");
    }
    if (text) *field = std::move(*text);
  }
  const auto expiration = xml_element_text(*block, "Expiration");
  if (!expiration || expiration->empty()) return malformed(provider, "Expiration is missing");
  credentials.expiration = parse_expiration(*expiration);
  if (!credentials.expiration) return malformed(provider, "Expiration is not an RFC 3339 time");
  return accept(std::move(credentials), provider, now);
}

}  // namespace s3lect::inline v1::detail
