// The sans-I/O half of the Entra ID providers: how token answers are read (expires_in against
// expires_on, numbers and strings, malformed and incomplete answers, refusals), that no token
// ever appears in a message, and the exact requests the providers send.
#include <s3lect/error.hpp>

#include "entra_token.hpp"
#include "support/fake_aws_endpoints.hpp"

#include <gtest/gtest.h>

#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;
using detail::parse_token_answer;
using time_point = std::chrono::system_clock::time_point;

const time_point now = time_point(std::chrono::seconds(1'900'000'000));
constexpr std::string_view secret = "eyJSECRET.TOKEN.VALUE";

std::string answer(std::string_view expiry_members) {
  return R"({"access_token":")" + std::string(secret) + R"(","token_type":"Bearer")" +
         std::string(expiry_members) + "}";
}

TEST(EntraTokenAnswer, ExpiresInCountsFromNow) {
  const auto number = parse_token_answer(200, answer(R"(,"expires_in":3599)"), "wi", now);
  ASSERT_FALSE(number.ec) << number.token.message;
  EXPECT_EQ(number.token.access_token, secret);
  EXPECT_EQ(number.token.provider, "wi");
  EXPECT_EQ(number.token.expires, now + 3599s);
  // IMDS writes its numbers as strings.
  const auto text = parse_token_answer(200, answer(R"(,"expires_in":"86399")"), "mi", now);
  ASSERT_FALSE(text.ec) << text.token.message;
  EXPECT_EQ(text.token.expires, now + 86399s);
}

TEST(EntraTokenAnswer, ExpiresOnIsSecondsSinceTheEpoch) {
  const auto on = parse_token_answer(200, answer(R"(,"expires_on":"1900000600")"), "mi", now);
  ASSERT_FALSE(on.ec) << on.token.message;
  EXPECT_EQ(on.token.expires, now + 600s);
}

TEST(EntraTokenAnswer, ExpiresInWinsOverExpiresOn) {
  // A host whose clock is an hour off would misread expires_on; expires_in needs no clock.
  const auto both = parse_token_answer(
      200, answer(R"(,"expires_in":"300","expires_on":"1900003600")"), "mi", now);
  ASSERT_FALSE(both.ec) << both.token.message;
  EXPECT_EQ(both.token.expires, now + 300s);
}

void expect_malformed(std::string_view body, std::string_view problem) {
  const auto outcome = parse_token_answer(200, body, "workload-identity", now);
  EXPECT_EQ(outcome.ec, credentials_errc::malformed) << body;
  EXPECT_TRUE(outcome.token.access_token.empty());
  EXPECT_NE(outcome.token.message.find("workload-identity: "), std::string::npos);
  EXPECT_NE(outcome.token.message.find(problem), std::string::npos) << outcome.token.message;
  EXPECT_EQ(outcome.token.message.find(secret), std::string::npos) << outcome.token.message;
}

TEST(EntraTokenAnswer, MalformedAndIncompleteAnswersAreRefusedWithoutQuotingTheToken) {
  expect_malformed("{\"access_token\":\"" + std::string(secret), "not JSON");
  expect_malformed("[1,2]", "not a JSON object");
  expect_malformed(R"({"expires_in":3600})", "access_token is missing");
  expect_malformed(R"({"access_token":42,"expires_in":3600})", "access_token is not a string");
  expect_malformed(R"({"access_token":"","expires_in":3600})", "access_token is empty");
  expect_malformed(answer(""), "neither expires_in nor expires_on");
  expect_malformed(answer(R"(,"expires_in":"soon")"), "expires_in is not a whole number");
  expect_malformed(answer(R"(,"expires_in":-5)"), "expires_in is out of range");
  expect_malformed(answer(R"(,"expires_on":"1800000000")"), "already expired");
  expect_malformed(R"({"access_token":"eyJSECRET.TOKEN.VALUE\r\nX-Evil: 1","expires_in":3600})",
                   "characters a header cannot carry");
}

TEST(EntraTokenAnswer, ARefusalCarriesTheStatusAndTheOAuthError) {
  const std::string body =
      R"({"error":"invalid_client","error_description":"AADSTS700016: Application not found"})";
  const auto refused = parse_token_answer(401, body, "workload-identity", now);
  EXPECT_EQ(refused.ec, credentials_errc::fetch_failed);
  EXPECT_EQ(refused.token.message,
            "workload-identity: the token endpoint answered HTTP 401: invalid_client: "
            "AADSTS700016: Application not found");
  const auto bare = parse_token_answer(500, "<html>oops</html>", "managed-identity", now);
  EXPECT_EQ(bare.token.message, "managed-identity: the token endpoint answered HTTP 500");
  // A 500 that echoes a token in a field we do not read does not leak it.
  const auto echoed = parse_token_answer(500, answer(R"(,"expires_in":1)"), "mi", now);
  EXPECT_EQ(echoed.token.message.find(secret), std::string::npos);
}

TEST(EntraTokenRequests, TheWorkloadIdentityFormHasTheFederatedAssertionFields) {
  const auto fields =
      test::decode_form(detail::workload_identity_form("client-1", "header.payload.sig"));
  EXPECT_EQ(fields.at("grant_type"), "client_credentials");
  EXPECT_EQ(fields.at("client_id"), "client-1");
  EXPECT_EQ(fields.at("scope"), "https://storage.azure.com/.default");
  EXPECT_EQ(fields.at("client_assertion_type"),
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  EXPECT_EQ(fields.at("client_assertion"), "header.payload.sig");
  EXPECT_EQ(fields.size(), 5u);
}

TEST(EntraTokenRequests, TheTokenUrlJoinsAuthorityAndTenant) {
  EXPECT_EQ(detail::workload_identity_token_url("", "t-1"),
            "https://login.microsoftonline.com/t-1/oauth2/v2.0/token");
  EXPECT_EQ(detail::workload_identity_token_url("https://login.microsoftonline.us", "t-1"),
            "https://login.microsoftonline.us/t-1/oauth2/v2.0/token");
  EXPECT_EQ(detail::managed_identity_query("2018-02-01", ""),
            "api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F");
  EXPECT_EQ(detail::managed_identity_query("2019-08-01", "c-1"),
            "api-version=2019-08-01&resource=https%3A%2F%2Fstorage.azure.com%2F&client_id=c-1");
}

}  // namespace
}  // namespace s3lect
