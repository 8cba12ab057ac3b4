// The lock record's JSON. Also the one translation unit that compiles Boost.JSON into libs3lect
// where it is not linked from the system's Boost (S3LECT_BOOST_JSON, CMakeLists.txt).
#include "s3lect/record.hpp"

#include "rfc3339.hpp"

#if defined(S3LECT_COMPILE_BOOST_JSON)
#include <boost/json/src.hpp>
#else
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#endif

#include <cstdio>
#include <exception>
#include <random>
#include <utility>

namespace s3lect::inline v1 {
namespace {

using namespace std::chrono;
namespace json = boost::json;

// Go's time.Time{} in RFC 3339: how Go writers (and ours, for Go's sake) mark a released record.
constexpr std::string_view go_zero_time = "0001-01-01T00:00:00Z";

record_decoding malformed(std::string message) {
  return {std::nullopt, make_error_code(errc::malformed_record), std::move(message)};
}

// The field `name` as a string; nullopt (and `error` set) when present with another type.
std::optional<std::string> string_field(const json::object& obj, std::string_view name,
                                        std::string& error) {
  const json::value* field = obj.if_contains(name);
  if (!field) return std::string{};
  if (const json::string* s = field->if_string()) return std::string(s->data(), s->size());
  error = std::string(name) + ": must be a string";
  return std::nullopt;
}

// The field `name` as a non-negative integer no greater than `max`; 0 when absent.
std::optional<std::uint64_t> integer_field(const json::object& obj, std::string_view name,
                                           std::uint64_t max, std::string& error) {
  const json::value* field = obj.if_contains(name);
  if (!field) return std::uint64_t{0};
  std::uint64_t value = 0;
  if (const std::int64_t* i = field->if_int64()) {
    if (*i < 0) {
      error = std::string(name) + ": must not be negative";
      return std::nullopt;
    }
    value = static_cast<std::uint64_t>(*i);
  } else if (const std::uint64_t* u = field->if_uint64()) {
    value = *u;
  } else {
    error = std::string(name) + ": must be an integer";
    return std::nullopt;
  }
  if (value > max) {
    error = std::string(name) + ": must be at most " + std::to_string(max);
    return std::nullopt;
  }
  return value;
}

/// Reads lastUpdated into `record` (a Go zero time marks it released); the problem, or empty.
std::string decode_last_updated(const json::object& obj, lock_record& record) {
  const json::value* updated = obj.if_contains("lastUpdated");
  if (!updated) return "lastUpdated: missing";
  const json::string* updated_text = updated->if_string();
  if (!updated_text) return "lastUpdated: must be a string";
  const auto instant = detail::parse_rfc3339(*updated_text);
  if (!instant) return "lastUpdated: not an RFC 3339 timestamp";
  if (instant->is_go_zero_time()) {
    record.released = true;
  } else {
    if (instant->unix_seconds < 0) return "lastUpdated: before 1970";
    // Compared in seconds: the limit keeps the conversion below far from overflowing. Judged on
    // the instant as encode_record writes it, rounded up to the millisecond: a record 0.9995 s
    // into the limit's second would otherwise decode but not decode again once re-encoded
    // (the round trip tests/fuzz/record_fuzz.cpp checks).
    const std::int64_t written_seconds =
        instant->unix_seconds + (instant->nanoseconds > 999'000'000 ? 1 : 0);
    const auto limit = sys_seconds{max_record_time}.time_since_epoch().count();
    if (written_seconds >= limit) {
      return "lastUpdated: in the year 2200 or later, past what a reader can represent";
    }
    record.last_updated = system_clock::time_point{duration_cast<system_clock::duration>(
        seconds{instant->unix_seconds} + nanoseconds{instant->nanoseconds})};
  }
  return {};
}

// A JSON integer within [min, max], else nullopt.
std::optional<std::int64_t> bounded_integer(const json::value& value, std::int64_t min,
                                            std::int64_t max) {
  const std::int64_t* i = value.if_int64();
  if (!i || *i < min || *i > max) return std::nullopt;
  return *i;
}

// The "candidates" array, or nullopt when any entry is not {"id": non-empty string, "priority":
// integer within the limits}. Entries past max_record_candidates are dropped.
std::optional<std::vector<ranked_candidate>> decode_candidates(const json::value& value) {
  const json::array* list = value.if_array();
  if (!list) return std::nullopt;
  std::vector<ranked_candidate> out;
  for (const json::value& entry : *list) {
    if (out.size() == max_record_candidates) break;
    const json::object* obj = entry.if_object();
    const json::value* id = obj ? obj->if_contains("id") : nullptr;
    const json::value* priority = obj ? obj->if_contains("priority") : nullptr;
    if (!id || !id->is_string() || id->get_string().empty() || !priority) return std::nullopt;
    const auto rank = bounded_integer(*priority, -max_record_priority, max_record_priority);
    if (!rank) return std::nullopt;
    out.push_back({std::string(id->get_string()), static_cast<std::int32_t>(*rank)});
  }
  return out;
}

// Reads the coordination fields. A field of the wrong type or out of range is dropped and named
// in coordination_note instead of refusing the record: refusing it would turn a release into
// "held by an unknown writer" (expiry only), while dropping a name only loses an ordering.
void decode_coordination(const json::object& obj, lock_record& record) {
  std::string dropped;
  const auto drop = [&dropped](std::string_view name) {
    dropped += dropped.empty() ? "ignored ill-typed or out-of-range " : ", ";
    dropped += name;
  };
  if (const json::value* v = obj.if_contains("priority")) {
    const auto priority = bounded_integer(*v, -max_record_priority, max_record_priority);
    priority ? void(record.priority = static_cast<std::int32_t>(*priority)) : drop("priority");
  }
  if (const json::value* v = obj.if_contains("candidates")) {
    auto list = decode_candidates(*v);
    list ? void(record.candidates = std::move(*list)) : drop("candidates");
  }
  for (auto [name, field] :
       {std::pair{"successor", &record.successor}, std::pair{"keepOut", &record.keep_out}}) {
    const json::value* v = obj.if_contains(name);
    if (!v) continue;
    v->is_string() ? void(*field = std::string(v->get_string())) : drop(name);
  }
  if (const json::value* v = obj.if_contains("handoverMs")) {
    const auto handover = bounded_integer(*v, 1, max_record_lease.count());
    handover ? void(record.handover = milliseconds{*handover}) : drop("handoverMs");
  }
  record.coordination_note = std::move(dropped);
}

// Writes the coordination fields that are set; a record without any keeps its old shape.
void encode_coordination(const lock_record& record, json::object& obj) {
  if (record.priority) obj["priority"] = *record.priority;
  if (!record.candidates.empty()) {
    json::array list;
    for (const ranked_candidate& c : record.candidates) {
      list.push_back(json::object{{"id", c.id}, {"priority", c.priority}});
    }
    obj["candidates"] = std::move(list);
  }
  if (!record.successor.empty()) obj["successor"] = record.successor;
  if (record.handover) obj["handoverMs"] = record.handover->count();
  if (!record.keep_out.empty()) obj["keepOut"] = record.keep_out;
}

// Decodes a parsed JSON value; the caller has checked size and syntax.
record_decoding decode_value(const json::value& value) {
  const json::object* obj = value.if_object();
  if (!obj) return malformed("record: must be a JSON object");
  std::string error;
  lock_record record;

  const auto leader_id = string_field(*obj, "leaderID", error);
  if (!leader_id) return malformed(error);
  record.leader_id = *leader_id;
  const auto leader_addr = string_field(*obj, "leaderAddr", error);
  if (!leader_addr) return malformed(error);
  record.leader_addr = *leader_addr;
  const auto nonce = string_field(*obj, "nonce", error);
  if (!nonce) return malformed(error);
  record.nonce = *nonce;
  const auto key_pin = string_field(*obj, "peerKeyPin", error);
  if (!key_pin) return malformed(error);
  record.key_pin = *key_pin;

  const auto term = integer_field(*obj, "term", max_record_term, error);
  if (!term) return malformed(error);
  record.term = *term;

  if (obj->contains("leaseMs")) {
    const auto lease =
        integer_field(*obj, "leaseMs", static_cast<std::uint64_t>(max_record_lease.count()), error);
    if (!lease) return malformed(error);
    if (*lease == 0) return malformed("leaseMs: must be at least 1");
    record.lease = milliseconds{static_cast<milliseconds::rep>(*lease)};
  }

  if (const json::value* released = obj->if_contains("released")) {
    const bool* flag = released->if_bool();
    if (!flag) return malformed("released: must be a boolean");
    record.released = *flag;
  }

  if (std::string problem = decode_last_updated(*obj, record); !problem.empty()) {
    return malformed(problem);
  }

  if (record.leader_id.empty() && !record.released) {
    return malformed("leaderID: missing or empty in a record that is not released");
  }
  decode_coordination(*obj, record);
  return {std::move(record), {}, {}};
}

}  // namespace

std::string encode_record(const lock_record& record) {
  json::object obj;
  obj["leaderID"] = record.leader_id;
  obj["leaderAddr"] = record.leader_addr;
  obj["lastUpdated"] =
      record.released ? std::string(go_zero_time) : detail::format_rfc3339_ms(record.last_updated);
  obj["term"] = record.term;
  if (record.lease) obj["leaseMs"] = record.lease->count();
  obj["released"] = record.released;
  obj["nonce"] = record.nonce;
  if (!record.key_pin.empty()) obj["peerKeyPin"] = record.key_pin;
  encode_coordination(record, obj);
  return json::serialize(obj);
}

record_decoding decode_record(std::string_view body) {
  if (body.size() > max_record_bytes) {
    return malformed("record: " + std::to_string(body.size()) + " bytes, more than the " +
                     std::to_string(max_record_bytes) + "-byte limit");
  }
  try {
    boost::system::error_code ec;
    const json::value value = json::parse(body, ec);
    if (ec) return malformed("record: not JSON (" + ec.message() + ")");
    return decode_value(value);
  } catch (const std::exception& e) {
    // Only allocation failure can get here; a reader must not die of a record.
    return malformed(std::string("record: ") + e.what());
  }
}

record_decoding decode_truncated_record(std::size_t bytes_read) {
  return malformed("record: more than " + std::to_string(bytes_read) +
                   " bytes (the read stopped there), over the " + std::to_string(max_record_bytes) +
                   "-byte limit");
}

std::string make_nonce() {
  thread_local std::random_device source;
  const std::uint64_t value = (std::uint64_t{source()} << 32) | std::uint64_t{source()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace s3lect::inline v1
