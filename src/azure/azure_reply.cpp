#include "azure_reply.hpp"

#include <s3lect/error.hpp>

#include "s3_error_xml.hpp"
#include "s3_request.hpp"

#include <string>

namespace s3lect::inline v1::detail {
namespace {

reply_verdict fail(errc e) {
  return {make_error_code(e), false};
}

/// Azure's messages end with "\nRequestId:...\nTime:...": the first line is the message.
std::string first_line(std::string text) {
  const std::size_t end = text.find_first_of("\r\n");
  if (end != std::string::npos) text.resize(end);
  return text;
}

}  // namespace

reply_verdict classify_blob_reply(s3_operation operation, unsigned status,
                                  std::string_view azure_code) {
  if (status >= 200 && status < 300) return {};
  if (status < 200 || status >= 600) return fail(errc::protocol_error);
  switch (status) {
    case 404:
      if (azure_code == "ContainerNotFound") return fail(errc::no_such_bucket);
      // The blob an If-Match named is gone: not the version expected.
      if (operation == s3_operation::put_if_match) return fail(errc::precondition_failed);
      if (operation == s3_operation::put_if_absent) return fail(errc::bad_request);
      return {{}, true};
    case 409:
      // Azure answers a create-only PUT (If-None-Match: *) that finds a blob with 409, not
      // 412: the same lost race.
      if (azure_code == "BlobAlreadyExists") return fail(errc::precondition_failed);
      // A lease someone took on the blob (LeaseIdMissing), an archived blob: no retry helps.
      return fail(errc::bad_request);
    case 412:
      return fail(errc::precondition_failed);
    case 401:  // a bearer token Azure does not take (InvalidAuthenticationInfo)
      return fail(errc::invalid_access_key);
    case 403:
      if (azure_code == "AuthenticationFailed") return fail(errc::signature_mismatch);
      if (azure_code == "InvalidAuthenticationInfo") return fail(errc::invalid_access_key);
      return fail(errc::access_denied);
    case 429:
      return fail(errc::throttled);
    default:
      break;
  }
  if (status >= 500) {
    // As on S3: a PUT that met a server error may have committed (500 OperationTimedOut says
    // only that the server gave up waiting), and only a re-read can tell.
    if (is_put(operation)) return fail(errc::outcome_unknown);
    return fail(status == 503 && azure_code == "ServerBusy" ? errc::throttled : errc::server_error);
  }
  return fail(errc::bad_request);
}

boost::system::error_code interpret_blob_reply(s3_operation kind, exchange_result& exchanged,
                                               const request_control& control, response_info& info,
                                               bool& missing) {
  info.round_trip = exchanged.round_trip;
  if (exchanged.error) return transport_failure(kind, exchanged, control, info);
  const http_response& response = exchanged.response;
  info.http_status = response.status;
  info.server_date = parse_http_date(response.header("Date"));
  info.request_id = std::string(response.header("x-ms-request-id"));
  if (response.status >= 300) {
    info.error_code = std::string(response.header("x-ms-error-code"));
    // The same <Error><Code/><Message/></Error> shape as S3's.
    if (auto body = parse_s3_error_xml(response.body)) {
      if (info.error_code.empty()) info.error_code = std::move(body->code);
      info.message = first_line(std::move(body->message));
    }
  }
  const reply_verdict verdict = classify_blob_reply(kind, response.status, info.error_code);
  const bool azure_shaped = !info.error_code.empty() || !info.request_id.empty();
  if (!azure_shaped && response.status >= 400 && response.status < 500) {
    info.message = "the endpoint does not answer like Azure Blob Storage: HTTP " +
                   std::to_string(response.status) +
                   " without x-ms-error-code or x-ms-request-id (check the endpoint)";
    if (verdict.object_missing) return errc::bad_request;
  }
  missing = verdict.object_missing;
  return verdict.error;
}

}  // namespace s3lect::inline v1::detail
