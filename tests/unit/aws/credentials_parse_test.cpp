// Sans-I/O parsing of what credential endpoints answer (IMDS and container JSON, STS XML) and of
// the shared profile files: well-formed documents, malformed ones (never a crash, a message that
// names the provider and the problem), and secrets that never reach a message.
#include "credentials_parse.hpp"
#include "aws_profile.hpp"
#include "support/fake_aws_endpoints.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

constexpr std::string_view secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET";
constexpr std::string_view token = "IQoJb3JpZ2luX2VjEPSESSIONTOKEN";

system_clock::time_point now() {
  return system_clock::now();
}

std::string imds_document(std::string_view expiration = "2099-01-01T00:00:00Z") {
  return R"({"Code":"Success","LastUpdated":"2024-01-01T00:00:00Z","Type":"AWS-HMAC",)"
         R"("AccessKeyId":"ASIAEXAMPLE","SecretAccessKey":")" +
         std::string(secret) + R"(","Token":")" + std::string(token) + R"(","Expiration":")" +
         std::string(expiration) + R"("})";
}

// --- JSON: IMDS and container endpoint ------------------------------------------------------

TEST(CredentialsJson, ParsesTheImdsDocument) {
  const auto outcome = detail::parse_json_credentials(imds_document(), "imds", now());
  ASSERT_FALSE(outcome.ec) << outcome.result.message;
  const aws_credentials& creds = outcome.result.credentials;
  EXPECT_EQ(creds.access_key_id, "ASIAEXAMPLE");
  EXPECT_EQ(creds.secret_access_key, secret);
  EXPECT_EQ(creds.session_token, token);
  EXPECT_EQ(creds.provider, "imds");
  ASSERT_TRUE(creds.expiration);
  EXPECT_EQ(system_clock::to_time_t(*creds.expiration), 4070908800);
}

TEST(CredentialsJson, ParsesTheContainerDocumentWithoutCodeOrToken) {
  const auto outcome = detail::parse_json_credentials(
      R"({"AccessKeyId":"AKIDC","SecretAccessKey":"sk","RoleArn":"arn:aws:iam::1:role/x",)"
      R"("Expiration":"2099-05-06T07:08:09.123+02:00","AccountId":"1"})",
      "container", now());
  ASSERT_FALSE(outcome.ec) << outcome.result.message;
  EXPECT_EQ(outcome.result.credentials.access_key_id, "AKIDC");
  EXPECT_TRUE(outcome.result.credentials.session_token.empty());
  EXPECT_EQ(outcome.result.credentials.provider, "container");
  ASSERT_TRUE(outcome.result.credentials.expiration);
}

TEST(CredentialsJson, ReportsAFailureCodeWithoutQuotingSecrets) {
  const auto outcome = detail::parse_json_credentials(
      R"({"Code":"AssumeRoleUnauthorizedAccess","Message":"role gone","SecretAccessKey":")" +
          std::string(secret) + "\"}",
      "imds", now());
  EXPECT_EQ(outcome.ec, credentials_errc::fetch_failed);
  EXPECT_NE(outcome.result.message.find("imds: "), std::string::npos);
  EXPECT_NE(outcome.result.message.find("AssumeRoleUnauthorizedAccess"), std::string::npos);
  EXPECT_EQ(outcome.result.message.find(secret), std::string::npos);
}

TEST(CredentialsJson, RefusesMalformedDocumentsNamingTheProblem) {
  const struct {
    std::string body;
    std::string expected;  // part of the message
  } cases[] = {
      {"", "not JSON"},
      {"{", "not JSON"},
      {"<html>oops</html>", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {"\"text\"", "not a JSON object"},
      {R"({"Code":7})", "Code is not a string"},
      {R"({"SecretAccessKey":"x"})", "AccessKeyId is missing"},
      {R"({"AccessKeyId":"A"})", "SecretAccessKey is missing"},
      {R"({"AccessKeyId":"A","SecretAccessKey":3})", "SecretAccessKey is not a string"},
      {R"({"AccessKeyId":"A","SecretAccessKey":"s","Token":null})", "Token is not a string"},
      {R"({"AccessKeyId":"A","SecretAccessKey":"s","Expiration":"tomorrow"})",
       "Expiration is not an RFC 3339 time"},
      {R"({"AccessKeyId":"A","SecretAccessKey":"s","Expiration":"2001-01-01T00:00:00Z"})",
       "expired already"},
      {R"({"AccessKeyId":"A\nB","SecretAccessKey":"s"})", "access key id contains"},
      {R"({"AccessKeyId":"A","SecretAccessKey":"s","Token":"a\r\nX-Evil: 1"})",
       "session token contains"},
  };
  for (const auto& c : cases) {
    const auto outcome = detail::parse_json_credentials(c.body, "container", now());
    EXPECT_TRUE(outcome.ec) << c.body;
    EXPECT_EQ(outcome.result.message.rfind("container: ", 0), 0u) << outcome.result.message;
    EXPECT_NE(outcome.result.message.find(c.expected), std::string::npos)
        << c.body << " -> " << outcome.result.message;
  }
}

TEST(CredentialsJson, NeverQuotesTheSecretWhenAnotherFieldIsWrong) {
  const std::string body = R"({"AccessKeyId":"A","SecretAccessKey":")" + std::string(secret) +
                           R"(","Token":")" + std::string(token) + R"(","Expiration":"garbage"})";
  const auto outcome = detail::parse_json_credentials(body, "imds", now());
  ASSERT_TRUE(outcome.ec);
  EXPECT_EQ(outcome.result.message.find(secret), std::string::npos);
  EXPECT_EQ(outcome.result.message.find(token), std::string::npos);
}

TEST(CredentialsJson, SurvivesRandomInput) {
  std::mt19937 random(42);
  const std::string valid = imds_document();
  for (int round = 0; round < 3000; ++round) {
    std::string body = valid;
    // Flip, cut or splice bytes of a valid document; plain noise too.
    switch (round % 3) {
      case 0:
        for (int i = 0; i < 4; ++i) body[random() % body.size()] = static_cast<char>(random());
        break;
      case 1:
        body.resize(random() % body.size());
        break;
      default:
        body.assign(random() % 200, '\0');
        for (char& c : body) c = static_cast<char>(random());
    }
    const auto outcome = detail::parse_json_credentials(body, "imds", now());
    if (outcome.ec) {
      EXPECT_EQ(outcome.result.message.find(secret), std::string::npos);
    }
  }
}

TEST(CredentialsJson, DescribesErrorBodies) {
  EXPECT_EQ(detail::describe_json_error(R"({"code":"AccessDenied","message":"no"})"),
            "AccessDenied: no");
  EXPECT_EQ(detail::describe_json_error(R"({"Message":"only a message"})"), "only a message");
  EXPECT_EQ(detail::describe_json_error("not json"), "");
  EXPECT_EQ(detail::describe_json_error(R"({"message":"line\nbreak"})"), "line break");
  EXPECT_LE(detail::describe_json_error(R"({"message":")" + std::string(1000, 'x') + "\"}").size(),
            210u);
}

// --- XML: STS ---------------------------------------------------------------------------------

std::string sts_document(std::string_view expiration = "2099-01-01T00:00:00Z") {
  return "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
         "<AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>sub"
         "</SubjectFromWebIdentityToken><Credentials>\n  <SessionToken>" +
         std::string(token) + "</SessionToken>\n  <SecretAccessKey>" + std::string(secret) +
         "</SecretAccessKey>\n  <Expiration>" + std::string(expiration) +
         "</Expiration>\n  <AccessKeyId>ASIASTS</AccessKeyId>\n</Credentials>"
         "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
}

TEST(CredentialsStsXml, ParsesCredentials) {
  const auto outcome = detail::parse_sts_credentials(200, sts_document(), "web-identity", now());
  ASSERT_FALSE(outcome.ec) << outcome.result.message;
  EXPECT_EQ(outcome.result.credentials.access_key_id, "ASIASTS");
  EXPECT_EQ(outcome.result.credentials.secret_access_key, secret);
  EXPECT_EQ(outcome.result.credentials.session_token, token);
  EXPECT_EQ(outcome.result.credentials.provider, "web-identity");
  ASSERT_TRUE(outcome.result.credentials.expiration);
}

TEST(CredentialsStsXml, TheSessionTokenMayBeAbsent) {
  const auto outcome = detail::parse_sts_credentials(
      200,
      "<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
      "<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>",
      "web-identity", now());
  ASSERT_FALSE(outcome.ec) << outcome.result.message;
  EXPECT_EQ(outcome.result.credentials.session_token, "");
}

TEST(CredentialsStsXml, ReportsStsErrors) {
  const auto outcome = detail::parse_sts_credentials(
      400,
      "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
      "<Message>Couldn&apos;t retrieve verification key</Message></Error></ErrorResponse>",
      "web-identity", now());
  EXPECT_EQ(outcome.ec, credentials_errc::fetch_failed);
  EXPECT_EQ(outcome.result.message,
            "web-identity: STS refused AssumeRoleWithWebIdentity: HTTP 400 InvalidIdentityToken: "
            "Couldn't retrieve verification key");

  const auto bare =
      detail::parse_sts_credentials(503, "Service Unavailable", "web-identity", now());
  EXPECT_EQ(bare.result.message, "web-identity: STS refused AssumeRoleWithWebIdentity: HTTP 503");
}

TEST(CredentialsStsXml, RefusesMalformedAnswers) {
  const struct {
    std::string body;
    std::string expected;
  } cases[] = {
      {"", "no Credentials element"},
      {"<Credentials>", "no Credentials element"},
      {"<Credentials><AccessKeyId>A</AccessKeyId></Credentials>", "SecretAccessKey is missing"},
      {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
       "<SessionToken>t</SessionToken></Credentials>",
       "Expiration is missing"},
      {"<Credentials><AccessKeyId><b>A</b></AccessKeyId></Credentials>",
       "AccessKeyId is not plain text"},
      {"<Credentials><AccessKeyId>A&bogus;</AccessKeyId></Credentials>",
       "AccessKeyId is not plain text"},
      {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
       "<SessionToken><b/></SessionToken></Credentials>",
       "SessionToken is not plain text"},
      {"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
       "<SessionToken>t</SessionToken><Expiration>soon</Expiration></Credentials>",
       "not an RFC 3339 time"},
  };
  for (const auto& c : cases) {
    const auto outcome = detail::parse_sts_credentials(200, c.body, "web-identity", now());
    EXPECT_EQ(outcome.ec, credentials_errc::malformed) << c.body;
    EXPECT_NE(outcome.result.message.find(c.expected), std::string::npos)
        << c.body << " -> " << outcome.result.message;
  }
}

TEST(CredentialsStsXml, SurvivesRandomInput) {
  std::mt19937 random(7);
  const std::string valid = sts_document();
  for (int round = 0; round < 3000; ++round) {
    std::string body = valid;
    if (round % 2 == 0) {
      for (int i = 0; i < 4; ++i) body[random() % body.size()] = static_cast<char>(random());
    } else {
      body.resize(random() % body.size());
    }
    const auto outcome = detail::parse_sts_credentials(200, body, "web-identity", now());
    if (outcome.ec) {
      EXPECT_EQ(outcome.result.message.find(secret), std::string::npos);
    }
  }
}

TEST(CredentialsStsXml, DecodesEntitiesAndCdata) {
  EXPECT_EQ(detail::xml_element_text("<A>x&amp;y&#65;&#x42;</A>", "A"), "x&yAB");
  EXPECT_EQ(detail::xml_element_text("<A><![CDATA[<raw>]]></A>", "A"), "<raw>");
  EXPECT_EQ(detail::xml_element_text("<AB>no</AB><A attr=\"1\">yes</A>", "A"), "yes");
  EXPECT_EQ(detail::xml_element_text("<A/>", "A"), "");
  EXPECT_EQ(detail::xml_element_text("<A>&#0;</A>", "A"), std::nullopt);
  EXPECT_EQ(detail::xml_element_text("<A>unterminated", "A"), std::nullopt);
}

// --- INI: shared profile files ----------------------------------------------------------------

TEST(AwsProfileIni, ParsesSectionsPropertiesAndComments) {
  const auto file = detail::parse_ini(
      "# comment\n"
      "; another\n"
      "[default]\r\n"
      "aws_access_key_id = AKIDDEFAULT\n"
      "AWS_Secret_Access_Key=secret # trailing comment\n"
      "\n"
      "[profile dev]   ; comment after a header\n"
      "region = eu-west-1\n"
      "s3 =\n"
      "  addressing_style = path\n"
      "  max_concurrent_requests = 4\n"
      "[ spaced name ]\n"
      "key = value#not-a-comment\n");
  EXPECT_TRUE(file.problems.empty()) << file.problems.front();
  ASSERT_EQ(file.sections.count("default"), 1u);
  EXPECT_EQ(file.sections.at("default").at("aws_access_key_id"), "AKIDDEFAULT");
  EXPECT_EQ(file.sections.at("default").at("aws_secret_access_key"), "secret");
  EXPECT_EQ(file.sections.at("profile dev").at("region"), "eu-west-1");
  EXPECT_EQ(file.sections.at("profile dev").at("s3.addressing_style"), "path");
  EXPECT_EQ(file.sections.at("profile dev").at("s3.max_concurrent_requests"), "4");
  EXPECT_EQ(file.sections.at("spaced name").at("key"), "value#not-a-comment");
}

TEST(AwsProfileIni, ReportsBadLinesByNumberWithoutQuotingThem) {
  const auto file = detail::parse_ini(
      "orphan = 1\n"                   // 1: outside a section
      "[default\n"                     // 2: no ']'
      "aws_access_key_id = X\n"        // 3: property of no valid section
      "[]\n"                           // 4: empty name
      "[ok] trailing\n"                // 5: text after the header
      "[good]\n"                       // 6
      "wJalrXUtnFEMI-just-a-secret\n"  // 7: no '='
      " = nameless\n"                  // 8
      "fine = yes\n");                 // 9
  ASSERT_EQ(file.problems.size(), 7u);
  EXPECT_EQ(file.problems[0], "line 1: property outside a valid section");
  EXPECT_EQ(file.problems[1], "line 2: section header without ']'");
  EXPECT_EQ(file.problems[2], "line 3: property outside a valid section");
  EXPECT_EQ(file.problems[3], "line 4: empty section name");
  EXPECT_EQ(file.problems[4], "line 5: text after a section header");
  EXPECT_EQ(file.problems[5], "line 7: expected 'name = value'");
  EXPECT_EQ(file.problems[6], "line 8: property without a name");
  EXPECT_EQ(file.sections.at("good").at("fine"), "yes");
  for (const auto& problem : file.problems) {
    EXPECT_EQ(problem.find("wJalr"), std::string::npos);
  }
}

TEST(AwsProfileIni, SurvivesRandomInput) {
  std::mt19937 random(3);
  for (int round = 0; round < 2000; ++round) {
    std::string text(random() % 300, '\0');
    for (char& c : text) c = "[]= \t\n#;abc\r"[random() % 13];
    (void)detail::parse_ini(text);
  }
  SUCCEED();
}

TEST(AwsProfileLookup, MergesBothFilesWithTheCredentialsFileWinning) {
  const std::optional<std::string> credentials =
      "[dev]\naws_access_key_id = AKIDCRED\naws_secret_access_key = fromcred\n";
  const std::optional<std::string> config =
      "[default]\nregion = us-east-2\n"
      "[profile dev]\nregion = eu-west-3\naws_access_key_id = AKIDCONF\n"
      "aws_secret_access_key = fromconf\naws_session_token = tok\n"
      "[dev]\nregion = ignored-bare-section\n";
  const auto dev = detail::find_profile(credentials, "c", config, "k", "dev");
  ASSERT_TRUE(dev.found);
  EXPECT_EQ(dev.properties.at("aws_access_key_id"), "AKIDCRED");
  EXPECT_EQ(dev.properties.at("aws_secret_access_key"), "fromcred");
  EXPECT_EQ(dev.properties.at("aws_session_token"), "tok");
  EXPECT_EQ(dev.properties.at("region"), "eu-west-3");

  const auto missing = detail::find_profile(credentials, "c", config, "k", "prod");
  EXPECT_FALSE(missing.found);
  const auto neither = detail::find_profile(std::nullopt, "c", std::nullopt, "k", "default");
  EXPECT_FALSE(neither.found);

  const auto preferred = detail::find_profile(
      std::nullopt, "c", std::string("[profile default]\nregion = a\n[default]\nregion = b\n"), "k",
      "default");
  EXPECT_EQ(preferred.properties.at("region"), "a");
}

TEST(AwsProfileInterpret, StaticKeysWebIdentityAndUnsupportedFeatures) {
  detail::ini_section keys{{"aws_access_key_id", "AKID"},
                           {"aws_secret_access_key", std::string(secret)},
                           {"aws_session_token", "tok"}};
  auto found = detail::interpret_profile(keys, "dev");
  ASSERT_EQ(found.type, detail::profile_credentials::kind::static_keys) << found.message;
  EXPECT_EQ(found.credentials.provider, "profile dev");
  EXPECT_EQ(found.credentials.session_token, "tok");

  found = detail::interpret_profile({{"region", "eu-west-1"}}, "dev");
  EXPECT_EQ(found.type, detail::profile_credentials::kind::none);

  found = detail::interpret_profile(
      {{"role_arn", "arn:aws:iam::1:role/r"}, {"web_identity_token_file", "/t"}}, "eks");
  ASSERT_EQ(found.type, detail::profile_credentials::kind::web_identity);
  EXPECT_EQ(found.role_arn, "arn:aws:iam::1:role/r");
  EXPECT_EQ(found.token_file, "/t");

  const struct {
    detail::ini_section properties;
    credentials_errc error;
    std::string expected;
  } invalid[] = {
      {{{"role_arn", "arn"}, {"source_profile", "base"}},
       credentials_errc::unsupported,
       "AssumeRole"},
      {{{"credential_process", "/bin/creds"}}, credentials_errc::unsupported, "credential_process"},
      {{{"sso_session", "corp"}}, credentials_errc::unsupported, "SSO"},
      {{{"aws_access_key_id", "AKID"}}, credentials_errc::malformed, "aws_secret_access_key"},
      {{{"aws_secret_access_key", std::string(secret)}},
       credentials_errc::malformed,
       "aws_access_key_id is not"},
      {{{"aws_access_key_id", "AK ID"}, {"aws_secret_access_key", std::string(secret)}},
       credentials_errc::malformed,
       "access key id contains"},
  };
  for (const auto& c : invalid) {
    found = detail::interpret_profile(c.properties, "x");
    EXPECT_EQ(found.type, detail::profile_credentials::kind::invalid) << c.expected;
    EXPECT_EQ(found.error, c.error) << c.expected;
    EXPECT_EQ(found.message.rfind("profile x: ", 0), 0u) << found.message;
    EXPECT_NE(found.message.find(c.expected), std::string::npos) << found.message;
    EXPECT_EQ(found.message.find(secret), std::string::npos);
  }
}

TEST(AwsProfilePaths, UsesVariablesThenHome) {
  detail::environment_snapshot env;
  env.set("HOME", "/home/u");
  auto paths = detail::locate_shared_files(env);
  EXPECT_EQ(paths.credentials_file, "/home/u/.aws/credentials");
  EXPECT_EQ(paths.config_file, "/home/u/.aws/config");

  env.set("AWS_SHARED_CREDENTIALS_FILE", "~/creds").set("AWS_CONFIG_FILE", "/etc/aws/config");
  paths = detail::locate_shared_files(env);
  EXPECT_EQ(paths.credentials_file, "/home/u/creds");
  EXPECT_EQ(paths.config_file, "/etc/aws/config");

  EXPECT_EQ(detail::selected_profile("", env), "default");
  env.set("AWS_PROFILE", "dev");
  EXPECT_EQ(detail::selected_profile("", env), "dev");
  EXPECT_EQ(detail::selected_profile("ops", env), "ops");

  const auto nowhere = detail::locate_shared_files(detail::environment_snapshot());
  EXPECT_TRUE(nowhere.credentials_file.empty());
}

TEST(AwsProfileRegion, ReadsTheConfigFileOfTheSelectedProfile) {
  test::scoped_aws_environment scope;
  scope.write_file(".aws/config",
                   "[default]\nregion = us-west-2\n[profile eu]\nregion = eu-central-1\n");
  EXPECT_EQ(detail::profile_region(detail::environment_snapshot::capture()), "us-west-2");
  scope.set("AWS_PROFILE", "eu");
  EXPECT_EQ(detail::profile_region(detail::environment_snapshot::capture()), "eu-central-1");
  scope.set("AWS_PROFILE", "absent");
  EXPECT_EQ(detail::profile_region(detail::environment_snapshot::capture()), "");
}

}  // namespace
}  // namespace s3lect
