// The reply table of the S3 client (status and S3 error code to errc) and the Date header parser.
#include <s3lect/error.hpp>

#include "s3_reply.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace s3lect {
namespace {

using detail::classify_reply;
using detail::s3_operation;
using op = s3_operation;

boost::system::error_code error_of(s3_operation operation, unsigned status,
                                   std::string_view code = {}) {
  return classify_reply(operation, status, code).error;
}

TEST(S3Reply, SuccessAndMissingObjects) {
  EXPECT_FALSE(error_of(op::get, 200));
  EXPECT_FALSE(error_of(op::put_if_absent, 200));
  EXPECT_FALSE(error_of(op::remove, 204));
  EXPECT_FALSE(classify_reply(op::get, 200, {}).object_missing);

  const auto get_missing = classify_reply(op::get, 404, "NoSuchKey");
  EXPECT_FALSE(get_missing.error);
  EXPECT_TRUE(get_missing.object_missing);
  EXPECT_TRUE(classify_reply(op::remove, 404, "NoSuchKey").object_missing);
  EXPECT_TRUE(classify_reply(op::get, 404, "").object_missing);
  EXPECT_EQ(error_of(op::get, 404, "NoSuchBucket"), errc::no_such_bucket);
  EXPECT_EQ(error_of(op::remove, 404, "NoSuchBucket"), errc::no_such_bucket);
}

TEST(S3Reply, ConditionalWriteVerdicts) {
  EXPECT_EQ(error_of(op::put_if_absent, 412, "PreconditionFailed"), errc::precondition_failed);
  EXPECT_EQ(error_of(op::put_if_match, 412, "PreconditionFailed"), errc::precondition_failed);
  EXPECT_EQ(error_of(op::put_if_match, 404, "NoSuchKey"), errc::precondition_failed);
  EXPECT_EQ(error_of(op::put_if_match, 404, "NoSuchBucket"), errc::no_such_bucket);
  EXPECT_EQ(error_of(op::put_if_absent, 404, "NoSuchBucket"), errc::no_such_bucket);
  EXPECT_EQ(error_of(op::put_if_match, 409, "ConditionalRequestConflict"), errc::conflict);
}

TEST(S3Reply, ServerErrorsAreUnknownOutcomesForPutsOnly) {
  EXPECT_EQ(error_of(op::put_if_match, 500, "UnknownError"), errc::outcome_unknown);
  EXPECT_EQ(error_of(op::put_if_absent, 502), errc::outcome_unknown);
  EXPECT_EQ(error_of(op::put_if_absent, 503, "ServiceUnavailable"), errc::outcome_unknown);
  EXPECT_EQ(error_of(op::get, 500, "InternalError"), errc::server_error);
  EXPECT_EQ(error_of(op::remove, 503), errc::server_error);
}

TEST(S3Reply, Throttling) {
  EXPECT_EQ(error_of(op::get, 503, "SlowDown"), errc::throttled);
  EXPECT_EQ(error_of(op::remove, 503, "SlowDown"), errc::throttled);
  EXPECT_EQ(error_of(op::put_if_match, 429), errc::throttled);
}

// AWS documents SlowDown as "reduce your request rate", not as "not applied": a conditional PUT
// answered with it may have landed, and resending it could meet 412 from our own write.
TEST(S3Reply, SlowDownOnAConditionalPutIsAnUnknownOutcome) {
  EXPECT_EQ(error_of(op::put_if_absent, 503, "SlowDown"), errc::outcome_unknown);
  EXPECT_EQ(error_of(op::put_if_match, 503, "SlowDown"), errc::outcome_unknown);
}

TEST(S3Reply, AuthenticationAndOtherClientErrors) {
  EXPECT_EQ(error_of(op::get, 403, "SignatureDoesNotMatch"), errc::signature_mismatch);
  EXPECT_EQ(error_of(op::get, 403, "InvalidAccessKeyId"), errc::invalid_access_key);
  EXPECT_EQ(error_of(op::get, 403, "RequestTimeTooSkewed"), errc::clock_skewed);
  EXPECT_EQ(error_of(op::get, 400, "RequestTimeTooSkewed"), errc::clock_skewed);
  EXPECT_EQ(error_of(op::get, 403, "AccessDenied"), errc::access_denied);
  EXPECT_EQ(error_of(op::get, 403), errc::access_denied);
  EXPECT_EQ(error_of(op::put_if_absent, 400, "InvalidArgument"), errc::bad_request);
  EXPECT_EQ(error_of(op::get, 301, "PermanentRedirect"), errc::bad_request);
  EXPECT_EQ(error_of(op::get, 100), errc::protocol_error);
  EXPECT_EQ(error_of(op::get, 999), errc::protocol_error);
}

TEST(S3Reply, ParsesImfFixdate) {
  const auto date = detail::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_TRUE(date);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*date), 784111777);

  const auto leap_day = detail::parse_http_date("Thu, 29 Feb 2024 23:59:59 GMT");
  ASSERT_TRUE(leap_day);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*leap_day), 1709251199);
}

TEST(S3Reply, RejectsOtherDateForms) {
  for (const char* bad : {"", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 2023 08:49:37 GMT",
                          "Sun, 06 Foo 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 0x Nov 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(detail::parse_http_date(bad)) << bad;
  }
}

}  // namespace
}  // namespace s3lect
