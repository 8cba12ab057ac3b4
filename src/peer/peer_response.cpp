#include "peer_response.hpp"

#include <s3lect/error.hpp>

// Boost.JSON is compiled once, in record.cpp; these headers only declare it.
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <exception>
#include <utility>

namespace s3lect::inline v1::detail {

namespace json = boost::json;
using boost::system::error_code;

namespace {

/// Bytes of an unexpected body quoted in an error message.
constexpr std::size_t quoted_body_bytes = 200;

peer_parsing failure(errc error, unsigned status, std::string message) {
  peer_parsing parsing;
  parsing.error = error;
  parsing.answer.http_status = status;
  parsing.answer.message = std::move(message);
  return parsing;
}

/// The start of `body` with anything but printable ASCII replaced, for a log line.
std::string quote(std::string_view body) {
  std::string text(body.substr(0, quoted_body_bytes));
  for (char& c : text) {
    if (c < ' ' || c > '~') c = '?';
  }
  if (body.size() > quoted_body_bytes) text += "...";
  return text;
}

/// Parses `body` as JSON; nullopt for anything else (never throws: a peer must not kill us).
std::optional<json::value> parse_json(std::string_view body, std::string& error) {
  try {
    error_code ec;
    json::value value = json::parse(body, ec);
    if (ec) {
      error = ec.message();
      return std::nullopt;
    }
    return value;
  } catch (const std::exception& e) {
    error = e.what();  // only allocation failure gets here
    return std::nullopt;
  }
}

/// A JSON number that is a non-negative integer, else nullopt.
std::optional<std::uint64_t> non_negative_integer(const json::value& value) {
  if (const std::int64_t* i = value.if_int64()) {
    if (*i < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*i);
  }
  if (const std::uint64_t* u = value.if_uint64()) return *u;
  return std::nullopt;
}

/// Reads the leader answer's leaseRemainingMs, writeAgeMs and serial into `answer`; the
/// problem, or empty.
std::string read_leader_numbers(const json::object& object, peer_answer& answer) {
  if (const json::value* remaining = object.if_contains("leaseRemainingMs")) {
    const std::optional<std::uint64_t> ms = non_negative_integer(*remaining);
    if (!ms) {
      return remaining->is_number() ? "leaseRemainingMs: must be a non-negative integer"
                                    : "leaseRemainingMs: must be a number";
    }
    if (*ms > static_cast<std::uint64_t>(max_lease_remaining.count())) {
      return "leaseRemainingMs: must be at most " + std::to_string(max_lease_remaining.count()) +
             ", is " + std::to_string(*ms);
    }
    answer.lease_remaining = std::chrono::milliseconds{static_cast<std::int64_t>(*ms)};
  }

  if (const json::value* age = object.if_contains("writeAgeMs")) {
    // Bounded like the lease: a write older than any lease cannot back a leader's answer.
    const std::optional<std::uint64_t> ms = non_negative_integer(*age);
    if (!ms || *ms > static_cast<std::uint64_t>(max_lease_remaining.count())) {
      return "writeAgeMs: must be an integer from 0 to " +
             std::to_string(max_lease_remaining.count());
    }
    answer.write_age = std::chrono::milliseconds{static_cast<std::int64_t>(*ms)};
  }

  if (const json::value* serial = object.if_contains("serial")) {
    answer.serial = non_negative_integer(*serial);
    if (!answer.serial) return "serial: must be a non-negative integer";
  }
  return {};
}

peer_parsing parse_leader(std::string_view body) {
  constexpr unsigned status = 200;
  std::string json_error;
  const std::optional<json::value> value = parse_json(body, json_error);
  if (!value) {
    return failure(errc::protocol_error, status,
                   "leader answer: not JSON (" + json_error + "): '" + quote(body) + "'");
  }
  const json::object* object = value->if_object();
  if (object == nullptr) {
    return failure(errc::protocol_error, status, "leader answer: not an object");
  }

  peer_parsing parsing;
  peer_answer& answer = parsing.answer;
  answer.http_status = status;
  answer.leader = true;
  if (std::string problem = read_leader_numbers(*object, answer); !problem.empty()) {
    return failure(errc::protocol_error, status, problem);
  }

  // decode_record parses the body again: at most 64 KiB, once per check, and it keeps one
  // definition of what a valid record is.
  record_decoding decoding = decode_record(body);
  if (!decoding.record) {
    return failure(errc::protocol_error, status, "leader record: " + decoding.message);
  }
  answer.record = std::move(*decoding.record);
  answer.term = answer.record.term;
  answer.leader_id = answer.record.leader_id;
  return parsing;
}

/// The "successor" and "handoverMs" of a 404 body beside a released record, each taken only when
/// well-formed (a non-empty string of at most 1024 bytes; an integer of 1 ms .. 24 h): a name
/// only orders who writes first, so a bad one is dropped, never an error.
void read_release_names(const json::object& object, peer_answer::released_record& released) {
  if (const json::value* successor = object.if_contains("successor")) {
    const json::string* text = successor->if_string();
    if (text && !text->empty() && text->size() <= 1024) {
      released.successor.assign(text->data(), text->size());
    }
  }
  if (const json::value* handover = object.if_contains("handoverMs")) {
    const std::optional<std::uint64_t> ms = non_negative_integer(*handover);
    if (ms && *ms >= 1 && *ms <= static_cast<std::uint64_t>(max_record_lease.count())) {
      released.handover = std::chrono::milliseconds{static_cast<std::int64_t>(*ms)};
    }
  }
}

/// "releasedETag" and "releasedTerm" of a 404 body, both well-formed, or nothing.
std::optional<peer_answer::released_record> released_hint(const json::object& object) {
  const json::value* etag = object.if_contains("releasedETag");
  const json::value* term = object.if_contains("releasedTerm");
  const json::string* etag_text = etag ? etag->if_string() : nullptr;
  // 0 is no term a release can name, so it stands for "absent or malformed" (a plain integer
  // also keeps GCC 12's -O2 maybe-uninitialized false positive on an optional away).
  const std::uint64_t number = term ? non_negative_integer(*term).value_or(0) : 0;
  if (!etag_text || etag_text->empty() || etag_text->size() > 1024 || number == 0 ||
      number >= max_record_term) {
    return std::nullopt;
  }
  peer_answer::released_record released;
  released.etag.assign(etag_text->data(), etag_text->size());
  released.term = number;
  read_release_names(object, released);
  return released;
}

peer_parsing parse_follower(std::string_view body) {
  peer_parsing parsing;
  peer_answer& answer = parsing.answer;
  answer.http_status = 404;
  std::string ignored;
  const std::optional<json::value> value = parse_json(body, ignored);
  const json::object* object = value ? value->if_object() : nullptr;
  if (object == nullptr) return parsing;
  if (const json::value* id = object->if_contains("leaderID")) {
    if (const json::string* text = id->if_string()) {
      answer.leader_id.assign(text->data(), text->size());
    }
  }
  if (const json::value* term = object->if_contains("term")) {
    if (const std::optional<std::uint64_t> number = non_negative_integer(*term)) {
      if (*number <= max_record_term) answer.term = *number;
    }
  }
  answer.released = released_hint(*object);
  return parsing;
}

}  // namespace

std::string_view to_string(peer_watch_outcome outcome) noexcept {
  switch (outcome) {
    case peer_watch_outcome::none:
      return "none";
    case peer_watch_outcome::changed:
      return "changed";
    case peer_watch_outcome::timeout:
      return "timeout";
    case peer_watch_outcome::refused:
      return "refused";
    case peer_watch_outcome::stopping:
      return "stopping";
  }
  return "none";
}

peer_watch_outcome parse_watch_outcome(std::string_view header) noexcept {
  if (header == "changed") return peer_watch_outcome::changed;
  if (header == "timeout") return peer_watch_outcome::timeout;
  if (header == "refused") return peer_watch_outcome::refused;
  if (header == "stopping") return peer_watch_outcome::stopping;
  return peer_watch_outcome::none;
}

peer_parsing parse_peer_response(unsigned status, std::string_view watch_header,
                                 std::string_view body, std::size_t max_body_bytes) {
  if (body.size() > max_body_bytes) {
    return failure(errc::body_too_large, status,
                   "answer body of " + std::to_string(body.size()) + " bytes exceeds " +
                       std::to_string(max_body_bytes));
  }
  peer_parsing parsing;
  if (status == 200) {
    parsing = parse_leader(body);
  } else if (status == 404) {
    parsing = parse_follower(body);
  } else {
    const errc error = status == 429                   ? errc::throttled
                       : status >= 500 && status < 600 ? errc::server_error
                       : status >= 400 && status < 500 ? errc::bad_request
                                                       : errc::protocol_error;
    return failure(error, status,
                   "peer answered HTTP " + std::to_string(status) + ": '" + quote(body) + "'");
  }
  if (!parsing.error) parsing.answer.watch = parse_watch_outcome(watch_header);
  return parsing;
}

}  // namespace s3lect::inline v1::detail
