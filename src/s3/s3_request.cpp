// Building and interpreting one S3 request: the signed headers of each operation and the
// mapping of its reply to s3lect::errc.
#include "s3_request.hpp"

#include <s3lect/error.hpp>

#include "metadata_headers.hpp"
#include "s3_error_xml.hpp"
#include "sigv4.hpp"

#include <chrono>
#include <utility>

namespace s3lect::inline v1::detail {

using boost::system::error_code;

bool is_put(s3_operation kind) {
  return kind == s3_operation::put_if_absent || kind == s3_operation::put_if_match;
}

std::string_view method_of(s3_operation kind) {
  switch (kind) {
    case s3_operation::get:
      return "GET";
    case s3_operation::remove:
      return "DELETE";
    default:
      return "PUT";
  }
}

namespace {

bool has_control_character(std::string_view s) {
  for (unsigned char c : s) {
    if (c < ' ' || c == 0x7f) return true;
  }
  return false;
}

}  // namespace

std::string argument_problem(std::string_view key, const put_condition* condition) {
  if (key.empty()) return "key: must not be empty";
  if (condition && condition->type == put_condition::kind::if_match) {
    if (condition->etag.empty()) return "condition: If-Match needs an ETag";
    // Header values must not carry CR/LF: it would split the request.
    if (has_control_character(condition->etag)) return "condition: ETag has control characters";
  }
  return {};
}

http_request build_s3_request(const request_addressing& addressing, const std::string& region,
                              const aws_credentials& creds, s3_operation kind, std::string_view key,
                              s3_request_parts parts) {
  http_request request;
  request.method = std::string(method_of(kind));
  request.target = s3_object_path(addressing.path_bucket, key);

  const std::string payload_hash =
      parts.body_file.empty() ? sha256_hex(parts.body) : std::string("UNSIGNED-PAYLOAD");
  const std::string amz_date = format_amz_date(std::chrono::system_clock::now());
  auto& headers = request.headers;
  headers.emplace_back("Host", addressing.host_header);
  headers.emplace_back("x-amz-date", amz_date);
  headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!creds.session_token.empty()) {
    headers.emplace_back("x-amz-security-token", creds.session_token);
  }
  if (const put_condition* condition = parts.condition) {
    if (condition->type == put_condition::kind::if_absent) {
      headers.emplace_back("If-None-Match", "*");
    } else {
      // Unquoted: Ceph RGW refuses a quoted ETag with 412, AWS accepts both.
      headers.emplace_back("If-Match", condition->etag);
    }
    headers.emplace_back("Content-Type", "application/json");
  }
  if (!parts.read_if_match.empty()) headers.emplace_back("If-Match", parts.read_if_match);
  if (!parts.range.empty()) headers.emplace_back("Range", parts.range);
  if (parts.metadata) append_metadata_headers(*parts.metadata, headers);

  sigv4_request to_sign;
  to_sign.method = request.method;
  to_sign.canonical_uri = request.target;
  to_sign.headers = headers;
  to_sign.payload_hash = payload_hash;
  sigv4_key signing_key;
  signing_key.access_key_id = creds.access_key_id;
  signing_key.secret_access_key = creds.secret_access_key;
  sigv4_scope scope;
  scope.amz_date = amz_date;
  scope.region = region;
  scope.service = "s3";
  headers.emplace_back("Authorization", authorization_header(signing_key, scope, to_sign));
  // Unsigned on purpose: proxies may rewrite it.
  headers.emplace_back("User-Agent", "s3lect");
  request.body = std::move(parts.body);
  request.body_file = std::move(parts.body_file);
  request.body_file_size = parts.body_file_size;
  return request;
}

error_code transport_failure(s3_operation kind, const exchange_result& exchanged,
                             const request_control& control, response_info& info) {
  info.message = exchanged.detail;
  if (is_put(kind) && control.may_be_delivered) {
    info.message = "the write may have been applied: " + info.message;
    return errc::outcome_unknown;
  }
  return exchanged.error;
}

error_code interpret_reply(s3_operation kind, exchange_result& exchanged,
                           const request_control& control, response_info& info, bool& missing) {
  info.round_trip = exchanged.round_trip;
  if (exchanged.error) return transport_failure(kind, exchanged, control, info);

  const http_response& response = exchanged.response;
  info.http_status = response.status;
  info.server_date = parse_http_date(response.header("Date"));
  info.request_id = std::string(response.header("x-amz-request-id"));
  if (response.status >= 300) {
    if (auto body = parse_s3_error_xml(response.body)) {
      info.error_code = std::move(body->code);
      info.message = std::move(body->message);
      if (!body->request_id.empty()) info.request_id = std::move(body->request_id);
    }
  }
  const reply_verdict verdict = classify_reply(kind, response.status, info.error_code);
  // A 4xx without an S3 error body or request id is some other server's answer (a web server,
  // a wrong --endpoint). Its bare 404 above all must not read as "no object": every lock would
  // look free, and `run` would campaign for ever against something that stores nothing.
  const bool s3_shaped = !info.error_code.empty() || !info.request_id.empty();
  if (!s3_shaped && response.status >= 400 && response.status < 500) {
    info.message = "the endpoint does not answer like S3: HTTP " + std::to_string(response.status) +
                   " without an S3 error body or x-amz-request-id (check --endpoint)";
    if (verdict.object_missing) return errc::bad_request;
  }
  missing = verdict.object_missing;
  return verdict.error;
}

}  // namespace s3lect::inline v1::detail
