#include "candidate_registration.hpp"

#include <s3lect/record.hpp>

#include "sha256.hpp"

// Boost.JSON is compiled once, in record.cpp; these headers only declare it.
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace s3lect::inline v1::detail {

namespace json = boost::json;

std::string registration_key(std::string_view lock_key, std::string_view server_id) {
  std::string key(lock_key);
  key += ".candidates/";
  key += sha256_hex(server_id).substr(0, 32);
  return key;
}

std::string registration_body(std::string_view server_id, std::int32_t priority,
                              std::string_view token) {
  json::object body;
  body["id"] = server_id;
  body["priority"] = priority;
  body["tokenSha256"] = sha256_hex(token);
  return json::serialize(body);
}

registration_verdict judge_registration(const std::optional<std::string>& body,
                                        const candidate_verification& checked) {
  const registration_verdict refuted{registration_verdict::kind::not_member, 0};
  if (!body) return refuted;
  boost::system::error_code ec;
  const json::value parsed = json::parse(*body, ec);
  const json::object* object = ec ? nullptr : parsed.if_object();
  if (object == nullptr) return refuted;
  const json::value* id = object->if_contains("id");
  const json::value* token = object->if_contains("tokenSha256");
  const json::value* priority = object->if_contains("priority");
  if (!id || !id->is_string() || id->get_string() != checked.id || !token || !token->is_string() ||
      token->get_string() != checked.token_sha256 || !priority || !priority->is_int64()) {
    return refuted;
  }
  const std::int64_t registered = priority->get_int64();
  if (registered < -max_record_priority || registered > max_record_priority) return refuted;
  return {registration_verdict::kind::member, static_cast<std::int32_t>(registered)};
}

}  // namespace s3lect::inline v1::detail
