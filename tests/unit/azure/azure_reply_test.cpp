// The reply table of the Azure client: status and Azure error code to errc, and how a reply
// fills response_info (x-ms-request-id, x-ms-error-code, the first line of the message).
#include <s3lect/error.hpp>

#include "azure_reply.hpp"

#include <gtest/gtest.h>

namespace s3lect::detail {
namespace {

using op = s3_operation;

boost::system::error_code error_of(op operation, unsigned status, std::string_view code = {}) {
  return classify_blob_reply(operation, status, code).error;
}

TEST(AzureReply, ALostCreateIs409BlobAlreadyExistsAndReadsAsAFailedPrecondition) {
  EXPECT_EQ(error_of(op::put_if_absent, 409, "BlobAlreadyExists"), errc::precondition_failed);
  EXPECT_EQ(error_of(op::put_if_match, 412, "ConditionNotMet"), errc::precondition_failed);
  EXPECT_EQ(error_of(op::put_if_absent, 412, "ConditionNotMet"), errc::precondition_failed);
  // The blob an If-Match named is gone.
  EXPECT_EQ(error_of(op::put_if_match, 404, "BlobNotFound"), errc::precondition_failed);
  // A lease somebody took on the blob is no lost race: no retry helps.
  EXPECT_EQ(error_of(op::put_if_match, 409, "LeaseIdMissing"), errc::bad_request);
}

TEST(AzureReply, MissingBlobsAreSuccessAndAMissingContainerIsNoSuchBucket) {
  const auto get_missing = classify_blob_reply(op::get, 404, "BlobNotFound");
  EXPECT_FALSE(get_missing.error);
  EXPECT_TRUE(get_missing.object_missing);
  EXPECT_TRUE(classify_blob_reply(op::remove, 404, "BlobNotFound").object_missing);
  EXPECT_EQ(error_of(op::get, 404, "ContainerNotFound"), errc::no_such_bucket);
  EXPECT_EQ(error_of(op::put_if_absent, 404, "ContainerNotFound"), errc::no_such_bucket);
  EXPECT_FALSE(error_of(op::put_if_absent, 201));
  EXPECT_FALSE(error_of(op::remove, 202));
}

TEST(AzureReply, RefusedCredentialsAreNamed) {
  EXPECT_EQ(error_of(op::get, 403, "AuthenticationFailed"), errc::signature_mismatch);
  EXPECT_EQ(error_of(op::get, 403, "InvalidAuthenticationInfo"), errc::invalid_access_key);
  EXPECT_EQ(error_of(op::get, 403, "AuthorizationPermissionMismatch"), errc::access_denied);
  EXPECT_EQ(error_of(op::put_if_match, 403, ""), errc::access_denied);
  EXPECT_EQ(error_of(op::get, 401, "InvalidAuthenticationInfo"), errc::invalid_access_key);
}

TEST(AzureReply, ServerTroubleIsTransientAndAPutsOutcomeThenUnknown) {
  EXPECT_EQ(error_of(op::get, 503, "ServerBusy"), errc::throttled);
  EXPECT_EQ(error_of(op::get, 500, "OperationTimedOut"), errc::server_error);
  EXPECT_EQ(error_of(op::put_if_absent, 500, "OperationTimedOut"), errc::outcome_unknown);
  EXPECT_EQ(error_of(op::put_if_match, 503, "ServerBusy"), errc::outcome_unknown);
  EXPECT_TRUE(is_transient(error_of(op::get, 503, "ServerBusy")));
  EXPECT_EQ(error_of(op::get, 429), errc::throttled);
  EXPECT_EQ(error_of(op::get, 700), errc::protocol_error);
  EXPECT_EQ(error_of(op::get, 400, "InvalidHeaderValue"), errc::bad_request);
}

exchange_result reply(unsigned status, std::vector<std::pair<std::string, std::string>> headers,
                      std::string body = {}) {
  exchange_result exchanged;
  exchanged.response.status = status;
  exchanged.response.headers = std::move(headers);
  exchanged.response.body = std::move(body);
  return exchanged;
}

TEST(AzureReply, TheRequestIdAndTheFirstLineOfTheMessageReachResponseInfo) {
  auto exchanged =
      reply(403, {{"x-ms-request-id", "rid-1"}, {"x-ms-error-code", "AuthenticationFailed"}},
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>AuthenticationFailed</Code>"
            "<Message>Server failed to authenticate the request.\nRequestId:rid-1\nTime:x</Message>"
            "</Error>");
  request_control control;
  response_info info;
  bool missing = false;
  EXPECT_EQ(interpret_blob_reply(op::get, exchanged, control, info, missing),
            errc::signature_mismatch);
  EXPECT_EQ(info.http_status, 403u);
  EXPECT_EQ(info.request_id, "rid-1");
  EXPECT_EQ(info.error_code, "AuthenticationFailed");
  EXPECT_EQ(info.message, "Server failed to authenticate the request.");
}

TEST(AzureReply, TheErrorCodeComesFromTheBodyWhenTheHeaderIsMissing) {
  auto exchanged = reply(409, {{"x-ms-request-id", "r"}},
                         "<Error><Code>BlobAlreadyExists</Code><Message>m</Message></Error>");
  request_control control;
  response_info info;
  bool missing = false;
  EXPECT_EQ(interpret_blob_reply(op::put_if_absent, exchanged, control, info, missing),
            errc::precondition_failed);
  EXPECT_EQ(info.error_code, "BlobAlreadyExists");
}

TEST(AzureReply, ABare404FromSomeOtherServerIsNeverNoBlob) {
  // A web server's 404 read as "no blob" would make every lock look free.
  auto exchanged = reply(404, {{"Content-Type", "text/html"}}, "<html>not found</html>");
  request_control control;
  response_info info;
  bool missing = false;
  EXPECT_EQ(interpret_blob_reply(op::get, exchanged, control, info, missing), errc::bad_request);
  EXPECT_FALSE(missing);
  EXPECT_NE(info.message.find("does not answer like Azure Blob Storage"), std::string::npos);
}

TEST(AzureReply, APutThatMayHaveBeenDeliveredWhenTheConnectionFailedHasAnUnknownOutcome) {
  exchange_result exchanged;
  exchanged.error = make_error_code(errc::connection_lost);
  exchanged.detail = "reset";
  request_control control;
  control.may_be_delivered = true;
  response_info info;
  bool missing = false;
  EXPECT_EQ(interpret_blob_reply(op::put_if_match, exchanged, control, info, missing),
            errc::outcome_unknown);
  EXPECT_EQ(interpret_blob_reply(op::get, exchanged, control, info, missing),
            errc::connection_lost);
}

}  // namespace
}  // namespace s3lect::detail
