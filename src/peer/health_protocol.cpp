#include "health_protocol.hpp"

#include <s3lect/record.hpp>

#include "http_message.hpp"
#include "uri_encode.hpp"

// Boost.JSON is compiled once, in record.cpp; these headers only declare it.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace s3lect::inline v1::detail {

namespace json = boost::json;

namespace {

/// Parses a whole string of decimal digits; nullopt for anything else, including overflow.
std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  // from_chars would accept a leading '-' for no type we use, but be explicit about what the
  // protocol allows: digits only.
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// At most 32 bytes of a query value for an error message, anything but printable ASCII as '?':
/// the message goes into a JSON body, which must stay UTF-8 whatever bytes the client sent.
std::string quote_value(std::string_view value) {
  std::string text(value.substr(0, 32));
  for (char& c : text) {
    if (c < ' ' || c > '~') c = '?';
  }
  return text;
}

health_response json_response(unsigned status, std::string body) {
  health_response response;
  response.status = status;
  // Answers describe a moment; a cache in between would replay a leadership that has ended.
  response.headers = {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}};
  response.body = std::move(body);
  return response;
}

std::string error_body(std::string_view error, std::string_view message = {}) {
  json::object body;
  body["error"] = error;
  if (!message.empty()) body["message"] = message;
  return json::serialize(body);
}

}  // namespace

target_parts split_target(std::string_view target) noexcept {
  const auto question = target.find('?');
  if (question == std::string_view::npos) return {target, {}};
  return {target.substr(0, question), target.substr(question + 1)};
}

watch_parsing parse_watch_query(std::string_view query) {
  std::optional<std::uint64_t> watch;
  std::optional<std::uint64_t> term;
  std::optional<std::uint64_t> serial;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto equals = pair.find('=');
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view{} : pair.substr(equals + 1);
    std::optional<std::uint64_t>* slot = nullptr;
    if (name == "watch") {
      slot = &watch;
    } else if (name == "term") {
      slot = &term;
    } else if (name == "serial") {
      slot = &serial;
    } else {
      continue;
    }
    if (slot->has_value()) return {std::nullopt, std::string(name) + ": given twice"};
    *slot = parse_decimal(value);
    if (!slot->has_value()) {
      return {std::nullopt,
              std::string(name) + ": must be a decimal number, is '" + quote_value(value) + "'"};
    }
  }
  if (watch.has_value() != term.has_value()) {
    return {std::nullopt, watch ? "term: required with watch" : "watch: required with term"};
  }
  if (serial && !watch) return {std::nullopt, "serial: only with watch and term"};
  if (!watch) return {};
  // Durations beyond what milliseconds can hold are capped by the handler anyway.
  constexpr auto longest = static_cast<std::uint64_t>(std::chrono::milliseconds::max().count());
  const auto duration = std::chrono::milliseconds{
      static_cast<std::chrono::milliseconds::rep>(std::min(*watch, longest))};
  return {watch_params{duration, *term, serial}, {}};
}

namespace {

/// The value of a hex digit (either case), or -1.
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) without
/// control characters: an id is shown in logs, JSON and terminals.
bool printable_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      if (lead < 0x20 || lead == 0x7f) return false;
      ++i;
      continue;
    }
    const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    if (length == 0 || lead > 0xf4 || i + length > text.size()) return false;
    std::uint32_t code = lead & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    i += length;
  }
  return true;
}

std::optional<std::int32_t> parse_priority(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::optional<std::uint64_t> magnitude = parse_decimal(text.substr(negative ? 1 : 0));
  if (!magnitude || *magnitude > static_cast<std::uint64_t>(max_record_priority)) {
    return std::nullopt;
  }
  const auto value = static_cast<std::int32_t>(*magnitude);
  return negative ? -value : value;
}

bool is_token(std::string_view text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text) {
  std::string decoded;
  decoded.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_unreserved(static_cast<unsigned char>(text[i]))) {
      decoded += text[i];
      continue;
    }
    if (text[i] != '%' || i + 2 >= text.size()) return std::nullopt;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    decoded += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return decoded;
}

std::optional<candidate_params> parse_candidate_query(std::string_view query) {
  std::optional<std::string_view> fields[3];  // candidate, priority, token
  constexpr std::string_view names[3] = {"candidate", "priority", "token"};
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto equals = pair.find('=');
    if (equals == std::string_view::npos) continue;
    const auto* name = std::find(std::begin(names), std::end(names), pair.substr(0, equals));
    if (name == std::end(names)) continue;
    std::optional<std::string_view>& field = fields[name - std::begin(names)];
    if (field) return std::nullopt;  // given twice: which one would be the claim?
    field = pair.substr(equals + 1);
  }
  if (!fields[0] || !fields[1] || !fields[2]) return std::nullopt;
  std::optional<std::string> id = percent_decode(*fields[0]);
  const std::optional<std::int32_t> priority = parse_priority(*fields[1]);
  if (!id || id->empty() || id->size() > 1024 || !printable_utf8(*id) || !priority ||
      !is_token(*fields[2])) {
    return std::nullopt;
  }
  return candidate_params{std::move(*id), *priority, std::string(*fields[2])};
}

routed_request route_request(std::string_view method, std::string_view target,
                             std::string_view path) {
  const target_parts parts = split_target(target);
  routed_request routed;
  if (parts.path != path) {
    routed.type = routed_request::kind::not_found;
    return routed;
  }
  if (method != "GET") {
    routed.type = routed_request::kind::method_not_allowed;
    return routed;
  }
  watch_parsing parsing = parse_watch_query(parts.query);
  if (!parsing.error.empty()) {
    routed.type = routed_request::kind::bad_request;
    routed.error = std::move(parsing.error);
    return routed;
  }
  routed.candidate = parse_candidate_query(parts.query);
  if (parsing.watch) {
    routed.type = routed_request::kind::watch;
    routed.watch = *parsing.watch;
  } else {
    routed.type = routed_request::kind::read;
  }
  return routed;
}

bool holds_term(const leadership_snapshot& snapshot, std::uint64_t term) noexcept {
  return snapshot.is_leader && snapshot.term == term;
}

bool holds_watch(const leadership_snapshot& snapshot, const watch_params& watch) noexcept {
  return holds_term(snapshot, watch.term) && (!watch.serial || snapshot.serial == *watch.serial);
}

std::string_view to_string(watch_outcome outcome) noexcept {
  switch (outcome) {
    case watch_outcome::changed:
      return "changed";
    case watch_outcome::timeout:
      return "timeout";
    case watch_outcome::refused:
      return "refused";
    case watch_outcome::stopping:
      return "stopping";
  }
  return "unknown";
}

namespace {

/// leader_body() without its two per-answer fields: the record with "term" set, serialized
/// without its closing brace, for one (record, leader, term). A leader answers many requests
/// between two writes; parsing and serializing the record for each was a fifth of an answer's
/// CPU.
struct leader_body_prefix {
  std::string record_json;
  std::string leader_id;
  std::uint64_t term = 0;
  bool valid = false;
  std::string prefix;
};

/// False when `value` holds a number beyond a double's range anywhere: Boost.JSON reads 1e999 as
/// infinity and would write it back as `Infinity`, which no JSON parser accepts.
bool all_finite(const json::value& value) {
  if (const double* d = value.if_double()) return std::isfinite(*d);
  if (const json::array* array = value.if_array()) {
    return std::all_of(array->begin(), array->end(), all_finite);
  }
  if (const json::object* object = value.if_object()) {
    return std::all_of(object->begin(), object->end(),
                       [](const json::key_value_pair& field) { return all_finite(field.value()); });
  }
  return true;
}

void rebuild(leader_body_prefix& cache, const leadership_snapshot& snapshot) {
  boost::system::error_code ec;
  json::value record = json::parse(snapshot.record_json, ec);
  if (ec || !record.is_object() || !all_finite(record)) {
    record = json::object{};
    record.as_object()["leaderID"] = snapshot.leader_id;
  }
  json::object& body = record.as_object();
  // Assigning keeps the position of an existing "term", so the body stays the record as written.
  body["term"] = snapshot.term;
  // Ours are appended after the record's own fields, whatever a foreign record held.
  body.erase("leaseRemainingMs");
  body.erase("serial");
  body.erase("writeAgeMs");
  body.erase("liveCandidates");
  cache.prefix = json::serialize(record);
  cache.prefix.pop_back();  // the closing brace; the object is not empty (it has "term")
  cache.record_json = snapshot.record_json;
  cache.leader_id = snapshot.leader_id;
  cache.term = snapshot.term;
  cache.valid = true;
}

}  // namespace

std::string leader_body(const leadership_snapshot& snapshot) {
  // One per thread: handlers may answer on several threads, and this needs no lock.
  thread_local leader_body_prefix cache;
  if (!cache.valid || cache.term != snapshot.term || cache.record_json != snapshot.record_json ||
      cache.leader_id != snapshot.leader_id) {
    rebuild(cache, snapshot);
  }
  std::string body;
  body.reserve(cache.prefix.size() + 64);
  body += cache.prefix;
  body += ",\"leaseRemainingMs\":";
  body += std::to_string(std::max<std::int64_t>(0, snapshot.lease_remaining.count()));
  body += ",\"serial\":";
  body += std::to_string(snapshot.serial);
  if (snapshot.write_age) {
    body += ",\"writeAgeMs\":";
    body += std::to_string(std::max<std::int64_t>(0, snapshot.write_age->count()));
  }
  if (!snapshot.candidates.empty()) {
    body += ",\"liveCandidates\":";
    body += candidates_json(snapshot.candidates);
  }
  body += '}';
  return body;
}

std::string candidates_json(const std::vector<candidate_info>& candidates) {
  json::array list;
  for (const candidate_info& candidate : candidates) {
    json::object entry;
    entry["id"] = candidate.id;
    entry["priority"] = candidate.priority;
    if (candidate.watching)
      entry["watchingMs"] = std::max<std::int64_t>(0, candidate.watching->count());
    entry["verified"] = candidate.verified;
    list.push_back(std::move(entry));
  }
  return json::serialize(list);
}

std::string follower_body(const leadership_snapshot& snapshot) {
  json::object body;
  body["leader"] = false;
  body["leaderID"] = snapshot.leader_id;
  body["term"] = snapshot.term;
  if (!snapshot.released_etag.empty()) {
    body["releasedETag"] = snapshot.released_etag;
    body["releasedTerm"] = snapshot.released_term;
    if (!snapshot.released_successor.empty()) body["successor"] = snapshot.released_successor;
    if (snapshot.released_handover) body["handoverMs"] = snapshot.released_handover->count();
  }
  return json::serialize(body);
}

void append_http_response(std::string& out, const health_response& response, unsigned version,
                          bool keep_alive, bool head) {
  append_http_response(out, response.status, response.headers, response.body, version, keep_alive,
                       head);
}

health_response leadership_response(const leadership_snapshot& snapshot) {
  if (snapshot.is_leader) return json_response(200, leader_body(snapshot));
  return json_response(404, follower_body(snapshot));
}

health_response watch_response(const leadership_snapshot& snapshot, watch_outcome outcome) {
  health_response response = leadership_response(snapshot);
  response.headers.emplace_back("X-S3lect-Watch", to_string(outcome));
  return response;
}

health_response bad_request_response(std::string_view message) {
  return json_response(400, error_body("bad_request", message));
}

health_response method_not_allowed_response() {
  health_response response = json_response(405, error_body("method_not_allowed"));
  response.headers.emplace_back("Allow", "GET");
  return response;
}

health_response not_found_response() {
  return json_response(404, error_body("not_found"));
}

health_response header_too_large_response() {
  return json_response(431, error_body("request_header_fields_too_large"));
}

health_response stopped_response() {
  return json_response(503, error_body("stopped"));
}

std::optional<health_response> rejection_response(const routed_request& routed) {
  switch (routed.type) {
    case routed_request::kind::bad_request:
      return bad_request_response(routed.error);
    case routed_request::kind::method_not_allowed:
      return method_not_allowed_response();
    case routed_request::kind::not_found:
      return not_found_response();
    case routed_request::kind::read:
    case routed_request::kind::watch:
      return std::nullopt;
  }
  return not_found_response();
}

std::optional<bind_address_parts> split_bind_address(std::string_view address) noexcept {
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = address.substr(0, colon);
  const std::optional<std::uint64_t> port = parse_decimal(address.substr(colon + 1));
  if (!port || *port > std::numeric_limits<std::uint16_t>::max()) return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an IPv6 address needs brackets, or its last group reads as a port
  }
  if (host.empty()) return std::nullopt;
  return bind_address_parts{host, static_cast<std::uint16_t>(*port)};
}

}  // namespace s3lect::inline v1::detail
