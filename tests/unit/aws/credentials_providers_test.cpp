// Each credential provider against its loopback fake (IMDSv2, container endpoint, STS) or real
// files in a temporary HOME, selected through the same variables as in production; and the
// default chain's order and error reporting. No traffic leaves 127.0.0.1.
#include <s3lect/credentials.hpp>

#include "aws_profile.hpp"
#include "credentials_container.hpp"
#include "imds.hpp"
#include "manual_clock.hpp"
#include "sts.hpp"
#include "support/fake_aws_endpoints.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <filesystem>
#include <string>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;
using test::served_credentials;

constexpr std::string_view web_token = "eyJhbGciOiJSUzI1NiJ9.web-identity-token.sig";
constexpr std::string_view role_arn = "arn:aws:iam::123456789012:role/s3lect";

class CredentialProviders : public ::testing::Test {
 protected:
  std::pair<error_code, credentials_result> fetch(credentials_provider& provider) {
    return test::run_until_complete<credentials_result>(
        io, [&](auto handler) { provider.async_fetch(std::move(handler)); });
  }

  std::shared_ptr<credentials_provider> chain() {
    return make_default_credentials_chain(io.get_executor());
  }

  std::shared_ptr<detail::coroutine_provider> imds(const test::fake_imds& fake,
                                                   std::chrono::seconds ttl = 21600s) {
    detail::imds_settings settings;
    settings.endpoint = fake.endpoint();
    settings.endpoint_configured = true;
    settings.token_ttl = ttl;
    return detail::make_imds_provider(io.get_executor(), settings);
  }

  /// A 127.0.0.1 port nothing listens on.
  static std::uint16_t closed_port() {
    asio::io_context scratch;
    asio::ip::tcp::acceptor acceptor(scratch, {asio::ip::make_address("127.0.0.1"), 0});
    return acceptor.local_endpoint().port();
  }

  test::scoped_aws_environment env;
  asio::io_context io;
};

void expect_served(const std::pair<error_code, credentials_result>& outcome,
                   const served_credentials& served, std::string_view provider) {
  ASSERT_FALSE(outcome.first) << outcome.first.message() << ": " << outcome.second.message;
  const aws_credentials& creds = outcome.second.credentials;
  EXPECT_EQ(creds.access_key_id, served.access_key_id);
  EXPECT_EQ(creds.secret_access_key, served.secret_access_key);
  EXPECT_EQ(creds.session_token, served.session_token);
  ASSERT_TRUE(creds.expiration);
  EXPECT_EQ(std::chrono::floor<std::chrono::seconds>(*creds.expiration),
            std::chrono::floor<std::chrono::seconds>(served.expiration));
  EXPECT_EQ(creds.provider, provider);
}

// --- IMDSv2 -----------------------------------------------------------------------------------

TEST_F(CredentialProviders, ImdsServesTheRoleCredentialsUnderASessionToken) {
  test::fake_imds fake;
  served_credentials served;
  fake.set_credentials(served);
  auto provider = imds(fake);

  expect_served(fetch(*provider), served, "imds");

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].target, "/latest/api/token");
  EXPECT_EQ(requests[0].header("X-aws-ec2-metadata-token-ttl-seconds"), "21600");
  EXPECT_EQ(requests[1].target, "/latest/meta-data/iam/security-credentials/");
  EXPECT_EQ(requests[2].target, "/latest/meta-data/iam/security-credentials/s3lect-test-role");
  for (std::size_t i = 1; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].method, "GET");
    EXPECT_EQ(requests[i].header("X-aws-ec2-metadata-token"), "imds-token-1");
  }
  EXPECT_EQ(fake.unauthorized(), 0u);
  // One keep-alive connection for the token and both GETs.
  EXPECT_EQ(requests[2].connection, requests[0].connection);
}

TEST_F(CredentialProviders, ImdsReusesItsTokenUntilTheTtlRunsOut) {
  // The provider and the fake service both measure the token's TTL on this clock.
  detail::manual_clock& clock = detail::manual_clock::install(io);
  test::fake_imds fake{detail::clock_source(&clock)};
  auto provider = imds(fake, 2s);
  ASSERT_FALSE(fetch(*provider).first);
  ASSERT_FALSE(fetch(*provider).first);
  EXPECT_EQ(fake.tokens_granted(), 1u);

  clock.advance(1600ms);  // past 2 s minus the provider's quarter-TTL margin
  ASSERT_FALSE(fetch(*provider).first);
  EXPECT_EQ(fake.tokens_granted(), 2u);
  EXPECT_EQ(fake.unauthorized(), 0u);
}

TEST_F(CredentialProviders, ImdsHonoursTheTtlTheServiceGranted) {
  detail::manual_clock& clock = detail::manual_clock::install(io);
  test::fake_imds fake{detail::clock_source(&clock)};
  fake.set_max_token_ttl(1s);
  auto provider = imds(fake);  // asks for six hours
  ASSERT_FALSE(fetch(*provider).first);
  clock.advance(1100ms);  // the fake now refuses the first token
  ASSERT_FALSE(fetch(*provider).first);
  EXPECT_EQ(fake.tokens_granted(), 2u);
  EXPECT_EQ(fake.unauthorized(), 0u);
}

TEST_F(CredentialProviders, ImdsTakesANewTokenAfterA401) {
  test::fake_imds fake;
  served_credentials served;
  fake.set_credentials(served);
  auto provider = imds(fake);
  ASSERT_FALSE(fetch(*provider).first);

  fake.forget_tokens();  // the metadata service restarted: our token is unknown
  expect_served(fetch(*provider), served, "imds");
  EXPECT_EQ(fake.unauthorized(), 1u);
  EXPECT_EQ(fake.tokens_granted(), 2u);
}

TEST_F(CredentialProviders, FakeImdsAnswers401ToARequestWithoutToken) {
  test::fake_imds fake;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"),
                  static_cast<unsigned short>(std::stoi(fake.endpoint().substr(17)))});
  const std::string request =
      "GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string reply;
  asio::read_until(socket, asio::dynamic_buffer(reply), "\r\n");
  EXPECT_EQ(reply.substr(0, 12), "HTTP/1.1 401");
  EXPECT_EQ(fake.unauthorized(), 1u);
}

TEST_F(CredentialProviders, ImdsRefusingTokensIsAnErrorNeverAnImdsV1Fallback) {
  test::fake_imds fake;
  fake.refuse_tokens(403);
  auto provider = imds(fake);
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.message,
            "imds: session token request (IMDSv2) refused with HTTP 403; IMDSv1 is not used");
  for (const auto& request : fake.requests()) EXPECT_EQ(request.method, "PUT");
}

TEST_F(CredentialProviders, ImdsWithoutAnAttachedRoleIsNotConfigured) {
  test::fake_imds fake;
  fake.set_role("");
  auto provider = imds(fake);
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::not_configured);
  EXPECT_EQ(result.message, "imds: no IAM role is attached to this instance");
}

TEST_F(CredentialProviders, ImdsCredentialFailuresNameTheRoleAndStatus) {
  test::fake_imds fake;
  fake.fail_credentials(500);
  auto provider = imds(fake);
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.message, "imds: credentials query for role s3lect-test-role answered HTTP 500");
}

TEST_F(CredentialProviders, UnreachableImdsIsNotConfiguredUnlessNamedExplicitly) {
  detail::imds_settings settings;
  settings.endpoint = "http://127.0.0.1:" + std::to_string(closed_port());
  settings.http_timeout = 1s;
  auto at_default = detail::make_imds_provider(io.get_executor(), settings);
  auto [ec, result] = fetch(*at_default);
  EXPECT_EQ(ec, credentials_errc::not_configured);
  EXPECT_EQ(result.message.rfind("imds: no instance metadata service at http://127.0.0.1:", 0), 0u)
      << result.message;

  settings.endpoint_configured = true;
  auto named = detail::make_imds_provider(io.get_executor(), settings);
  std::tie(ec, result) = fetch(*named);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
}

TEST_F(CredentialProviders, ImdsSettingsComeFromTheEnvironment) {
  detail::environment_snapshot snapshot;
  EXPECT_EQ(detail::imds_settings_from(snapshot).endpoint, "http://169.254.169.254");
  EXPECT_FALSE(detail::imds_settings_from(snapshot).endpoint_configured);
  snapshot.set("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "IPv6");
  EXPECT_EQ(detail::imds_settings_from(snapshot).endpoint, "http://[fd00:ec2::254]");
  snapshot.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1338");
  EXPECT_EQ(detail::imds_settings_from(snapshot).endpoint, "http://127.0.0.1:1338");
  EXPECT_TRUE(detail::imds_settings_from(snapshot).endpoint_configured);
  EXPECT_FALSE(detail::imds_settings_from(snapshot).disabled);
  snapshot.set("AWS_EC2_METADATA_DISABLED", "TRUE");
  EXPECT_TRUE(detail::imds_settings_from(snapshot).disabled);
  snapshot.set("AWS_EC2_METADATA_DISABLED", "false");
  EXPECT_FALSE(detail::imds_settings_from(snapshot).disabled);
}

// --- container endpoint -----------------------------------------------------------------------

TEST_F(CredentialProviders, ContainerEndpointWithTokenFile) {
  test::fake_container_endpoint fake;
  served_credentials served;
  fake.set_credentials(served);
  fake.require_authorization("pod-identity-token-1");
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", fake.full_uri());
  env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
          env.write_file("token", "pod-identity-token-1\n"));
  env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-a-file-is-set");

  auto provider = chain();
  expect_served(fetch(*provider), served, "container");
  ASSERT_EQ(fake.requests().size(), 1u);
  EXPECT_EQ(fake.requests()[0].header("Authorization"), "pod-identity-token-1");

  // The agent rotates the token file; the next fetch reads it again.
  fake.require_authorization("pod-identity-token-2");
  env.write_file("token", "pod-identity-token-2");
  expect_served(fetch(*provider), served, "container");
}

TEST_F(CredentialProviders, ContainerEndpointWithTokenVariable) {
  test::fake_container_endpoint fake;
  served_credentials served;
  fake.set_credentials(served);
  fake.require_authorization("ecs-token");
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", fake.full_uri());
  env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-token");
  auto provider = chain();
  expect_served(fetch(*provider), served, "container");
}

TEST_F(CredentialProviders, ContainerRefusalIsReportedWithoutTheToken) {
  test::fake_container_endpoint fake;
  fake.require_authorization("right-token");
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", fake.full_uri());
  env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong-token");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_NE(result.message.find("container: http://127.0.0.1:"), std::string::npos);
  EXPECT_NE(result.message.find("answered HTTP 401: AccessDenied: bad authorization token"),
            std::string::npos)
      << result.message;
  EXPECT_EQ(result.message.find("wrong-token"), std::string::npos);
  EXPECT_EQ(result.message.find("/v2/credentials"), std::string::npos);
}

TEST_F(CredentialProviders, ContainerEndpointRules) {
  detail::environment_snapshot snapshot;
  EXPECT_FALSE(detail::container_endpoint_from(snapshot).configured);

  snapshot.set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc");
  snapshot.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/ignored");
  auto endpoint = detail::container_endpoint_from(snapshot);
  EXPECT_TRUE(endpoint.configured);
  EXPECT_EQ(endpoint.url, "http://169.254.170.2/v2/credentials/abc");
  EXPECT_TRUE(endpoint.problem.empty());

  const struct {
    std::string uri;
    bool allowed;
  } cases[] = {
      {"http://127.0.0.1:8080/creds", true},
      {"http://localhost/creds", true},
      {"http://[::1]:80/creds", true},
      {"http://169.254.170.23/v1/credentials", true},
      {"http://[fd00:ec2::23]/v1/credentials", true},
      {"https://creds.example.com/x", true},
      {"http://10.0.0.5/creds", false},
      {"http://creds.example.com/x", false},
      {"ftp://127.0.0.1/x", false},
      {"http://127.0.0.1/x#frag", false},
  };
  for (const auto& c : cases) {
    detail::environment_snapshot full;
    full.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", c.uri);
    endpoint = detail::container_endpoint_from(full);
    EXPECT_TRUE(endpoint.configured);
    EXPECT_EQ(endpoint.problem.empty(), c.allowed) << c.uri << ": " << endpoint.problem;
  }
}

// --- web identity (STS) -----------------------------------------------------------------------

TEST_F(CredentialProviders, WebIdentityFromEnvironmentAssumesTheRole) {
  test::fake_sts fake{std::string(role_arn), std::string(web_token)};
  served_credentials served;
  fake.set_credentials(served);
  env.set("AWS_WEB_IDENTITY_TOKEN_FILE",
          env.write_file("eks/token", std::string(web_token) + "\n"));
  env.set("AWS_ROLE_ARN", std::string(role_arn));
  env.set("AWS_ROLE_SESSION_NAME", "node-7");
  env.set("AWS_ENDPOINT_URL_STS", fake.endpoint());

  auto provider = chain();
  expect_served(fetch(*provider), served, "web-identity");
  const auto form = fake.last_form();
  EXPECT_EQ(form.at("RoleArn"), role_arn);
  EXPECT_EQ(form.at("RoleSessionName"), "node-7");
  EXPECT_EQ(form.at("WebIdentityToken"), web_token);
  ASSERT_EQ(fake.requests().size(), 1u);
  EXPECT_EQ(fake.requests()[0].header("Authorization"), "");  // unsigned: the token is the proof
  EXPECT_NE(fake.requests()[0].header("Content-Type").find("x-www-form-urlencoded"),
            std::string::npos);

  // The issuer rotates the token file: the next fetch sends the new one.
  env.write_file("eks/token", "rotated-token");
  fake.expect_token("rotated-token");
  expect_served(fetch(*provider), served, "web-identity");
}

TEST_F(CredentialProviders, WebIdentityRefusalNamesTheStsErrorNotTheToken) {
  test::fake_sts fake{std::string(role_arn), "the-expected-token"};
  env.set("AWS_WEB_IDENTITY_TOKEN_FILE", env.write_file("token", "a-stale-token"));
  env.set("AWS_ROLE_ARN", std::string(role_arn));
  env.set("AWS_ENDPOINT_URL_STS", fake.endpoint());
  // A working profile must not be used instead: the configured provider's failure is reported.
  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id=AKID\naws_secret_access_key=s\n");

  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.message,
            "web-identity: STS refused AssumeRoleWithWebIdentity: HTTP 400 InvalidIdentityToken: "
            "Couldn't retrieve verification key");
  EXPECT_EQ(result.message.find("a-stale-token"), std::string::npos);
  // Default session name.
  EXPECT_EQ(fake.last_form().at("RoleSessionName").rfind("s3lect-", 0), 0u);
}

TEST_F(CredentialProviders, WebIdentityNeedsARoleArnAndAReadableToken) {
  env.set("AWS_WEB_IDENTITY_TOKEN_FILE", env.home().string() + "/missing-token");
  auto provider = chain();
  auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_NE(result.message.find("no role ARN (AWS_ROLE_ARN)"), std::string::npos);

  env.set("AWS_ROLE_ARN", std::string(role_arn));
  provider = chain();
  std::tie(ec, result) = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_NE(result.message.find("missing-token does not exist"), std::string::npos);
}

TEST_F(CredentialProviders, StsEndpointChoice) {
  detail::environment_snapshot snapshot;
  EXPECT_EQ(detail::sts_endpoint(snapshot, ""), "https://sts.amazonaws.com");
  EXPECT_EQ(detail::sts_endpoint(snapshot, "eu-west-1"), "https://sts.eu-west-1.amazonaws.com");
  EXPECT_EQ(detail::sts_endpoint(snapshot, "cn-north-1"),
            "https://sts.cn-north-1.amazonaws.com.cn");
  snapshot.set("AWS_REGION", "ap-south-1");
  EXPECT_EQ(detail::sts_endpoint(snapshot, ""), "https://sts.ap-south-1.amazonaws.com");
  snapshot.set("AWS_ENDPOINT_URL", "http://127.0.0.1:9000");
  EXPECT_EQ(detail::sts_endpoint(snapshot, "eu-west-1"), "http://127.0.0.1:9000");
  snapshot.set("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9001");
  EXPECT_EQ(detail::sts_endpoint(snapshot, "eu-west-1"), "http://127.0.0.1:9001");
}

TEST_F(CredentialProviders, WebIdentityRequestIsFormEncoded) {
  const auto request = detail::web_identity_request("arn:aws:iam::1:role/a b", "s&n", "t+k/=");
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.body,
            "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3A"
            "role%2Fa%20b&RoleSessionName=s%26n&WebIdentityToken=t%2Bk%2F%3D");
}

// --- shared profile files ---------------------------------------------------------------------

TEST_F(CredentialProviders, DefaultProfileFromTheCredentialsFile) {
  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = s3cr3t\n");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  ASSERT_FALSE(ec) << result.message;
  EXPECT_EQ(result.credentials.access_key_id, "AKIDPROFILE");
  EXPECT_EQ(result.credentials.secret_access_key, "s3cr3t");
  EXPECT_TRUE(result.credentials.session_token.empty());
  EXPECT_FALSE(result.credentials.expiration);
  EXPECT_EQ(result.credentials.provider, "profile default");
}

TEST_F(CredentialProviders, NamedProfileFromTheConfigFileWithSessionToken) {
  env.write_file(".aws/config",
                 "[default]\nregion = us-east-1\n"
                 "[profile dev]\nregion = eu-west-1\naws_access_key_id = AKIDDEV\n"
                 "aws_secret_access_key = devsecret\naws_session_token = devtoken\n");
  env.set("AWS_PROFILE", "dev");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  ASSERT_FALSE(ec) << result.message;
  EXPECT_EQ(result.credentials.access_key_id, "AKIDDEV");
  EXPECT_EQ(result.credentials.session_token, "devtoken");
  EXPECT_EQ(result.credentials.provider, "profile dev");
}

TEST_F(CredentialProviders, ProfileFilesAtCustomPaths) {
  env.set("AWS_SHARED_CREDENTIALS_FILE", env.write_file("elsewhere/creds",
                                                        "[ops]\naws_access_key_id = AKIDOPS\n"
                                                        "aws_secret_access_key = opssecret\n"));
  env.set("AWS_CONFIG_FILE", env.write_file("elsewhere/config", "[profile ops]\nregion = x\n"));
  env.write_file(".aws/credentials",
                 "[ops]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n");
  credentials_chain_options options;
  options.profile = "ops";
  auto provider = make_default_credentials_chain(io.get_executor(), options);
  const auto [ec, result] = fetch(*provider);
  ASSERT_FALSE(ec) << result.message;
  EXPECT_EQ(result.credentials.access_key_id, "AKIDOPS");
  EXPECT_EQ(result.credentials.provider, "profile ops");
}

TEST_F(CredentialProviders, ANamedProfileThatDoesNotExistIsAnError) {
  env.write_file(".aws/credentials", "[default]\naws_access_key_id=A\naws_secret_access_key=s\n");
  env.set("AWS_PROFILE", "prod");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.message.rfind("profile prod: not found in " + env.home().string() +
                                     "/.aws/credentials or " + env.home().string() +
                                     "/.aws/config (absent)",
                                 0),
            0u)
      << result.message;
}

TEST_F(CredentialProviders, UnreadableOrOversizedProfileFilesAreErrorsNamingThem) {
  // A directory opens but cannot be read: the error says which path and why.
  const std::string directory = (env.home() / "a-directory").string();
  std::filesystem::create_directories(directory);
  env.set("AWS_SHARED_CREDENTIALS_FILE", directory);
  {
    auto provider = chain();
    const auto [ec, result] = fetch(*provider);
    EXPECT_EQ(ec, credentials_errc::fetch_failed);
    EXPECT_NE(result.message.find("cannot read " + directory + ": Is a directory"),
              std::string::npos)
        << result.message;
  }
  // More than the 1 MiB a profile file may have is refused, not read on.
  const std::string key_line = "aws_access_key_id = AKIDBIG\naws_secret_access_key = s\n";
  std::string big = "[default]\n" + key_line;
  while (big.size() <= 1024 * 1024) big += "# padding padding padding padding padding padding\n";
  const std::string big_file = env.write_file("big-credentials", big);
  env.set("AWS_SHARED_CREDENTIALS_FILE", big_file);
  {
    auto provider = chain();
    const auto [ec, result] = fetch(*provider);
    EXPECT_EQ(ec, credentials_errc::fetch_failed);
    EXPECT_NE(result.message.find(big_file + " is larger than 1048576 bytes"), std::string::npos)
        << result.message;
  }
  // Just under the limit, with the keys at the very end, is read whole.
  std::string fits = "[default]\n";
  while (fits.size() + key_line.size() + 60 <= 1024 * 1024) fits += "# padding padding padding\n";
  fits += key_line;
  env.set("AWS_SHARED_CREDENTIALS_FILE", env.write_file("fits-credentials", fits));
  {
    auto provider = chain();
    const auto [ec, result] = fetch(*provider);
    ASSERT_FALSE(ec) << result.message;
    EXPECT_EQ(result.credentials.access_key_id, "AKIDBIG");
  }
}

TEST_F(CredentialProviders, ABrokenProfileReportsItsLinesNotItsSecrets) {
  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id = AKID\naws_secret_access_key\n"
                 "wJalrXUtnFEMI/K7MDENG\n");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::malformed);
  EXPECT_NE(result.message.find("profile default: aws_access_key_id is set but "
                                "aws_secret_access_key is not"),
            std::string::npos)
      << result.message;
  EXPECT_NE(result.message.find("credentials line 3: expected 'name = value'"), std::string::npos);
  EXPECT_EQ(result.message.find("wJalr"), std::string::npos);
}

TEST_F(CredentialProviders, ProfileWithWebIdentityUsesSts) {
  test::fake_sts fake{std::string(role_arn), std::string(web_token)};
  served_credentials served;
  fake.set_credentials(served);
  const std::string token_file = env.write_file("token", std::string(web_token));
  env.write_file(".aws/config", "[profile eks]\nrole_arn = " + std::string(role_arn) +
                                    "\nweb_identity_token_file = " + token_file +
                                    "\nrole_session_name = from-profile\n");
  env.set("AWS_PROFILE", "eks");
  env.set("AWS_ENDPOINT_URL_STS", fake.endpoint());
  auto provider = chain();
  expect_served(fetch(*provider), served, "profile eks");
  EXPECT_EQ(fake.last_form().at("RoleSessionName"), "from-profile");
}

// --- the chain --------------------------------------------------------------------------------

TEST_F(CredentialProviders, ChainOrderEnvironmentFirst) {
  test::fake_container_endpoint container;
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.full_uri());
  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id=AKIDP\naws_secret_access_key=p\n");
  env.set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env.set("AWS_SECRET_ACCESS_KEY", "envsecret");
  env.set("AWS_SESSION_TOKEN", "envtoken");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  ASSERT_FALSE(ec) << result.message;
  EXPECT_EQ(result.credentials.access_key_id, "AKIDENV");
  EXPECT_EQ(result.credentials.session_token, "envtoken");
  EXPECT_EQ(result.credentials.provider, "environment");
  EXPECT_TRUE(container.requests().empty());
}

TEST_F(CredentialProviders, ChainOrderWebIdentityBeforeProfile) {
  test::fake_sts sts{std::string(role_arn), std::string(web_token)};
  env.set("AWS_WEB_IDENTITY_TOKEN_FILE", env.write_file("token", std::string(web_token)));
  env.set("AWS_ROLE_ARN", std::string(role_arn));
  env.set("AWS_ENDPOINT_URL_STS", sts.endpoint());
  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id=AKIDP\naws_secret_access_key=p\n");
  auto provider = chain();
  EXPECT_EQ(fetch(*provider).second.credentials.provider, "web-identity");
}

TEST_F(CredentialProviders, ChainOrderProfileBeforeContainerBeforeImds) {
  test::fake_container_endpoint container;
  test::fake_imds imds;
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.full_uri());
  env.unset("AWS_EC2_METADATA_DISABLED");
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint());
  // A region-only profile has no credentials: the chain moves on.
  env.write_file(".aws/config", "[default]\nregion = eu-west-1\n");
  EXPECT_EQ(fetch(*chain()).second.credentials.provider, "container");

  env.write_file(".aws/credentials",
                 "[default]\naws_access_key_id=AKIDP\naws_secret_access_key=p\n");
  EXPECT_EQ(fetch(*chain()).second.credentials.provider, "profile default");
  EXPECT_EQ(container.credentials_served(), 1u);

  env.unset("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  std::filesystem::remove(env.home() / ".aws/credentials");
  EXPECT_EQ(fetch(*chain()).second.credentials.provider, "imds");
  EXPECT_EQ(imds.credentials_served(), 1u);
}

TEST_F(CredentialProviders, EmptyChainListsWhatEachProviderLookedFor) {
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::no_credentials);
  EXPECT_EQ(result.message,
            "no provider applies (environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "are not set; web-identity: AWS_WEB_IDENTITY_TOKEN_FILE is not set; profile default: "
            "not found in " +
                env.home().string() + "/.aws/credentials (absent) or " + env.home().string() +
                "/.aws/config (absent); container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
                "_FULL_URI are not set; imds: disabled by AWS_EC2_METADATA_DISABLED)");
}

TEST_F(CredentialProviders, HalfAKeyPairInTheEnvironmentIsAnError) {
  env.set("AWS_ACCESS_KEY_ID", "AKIDENV");
  auto provider = chain();
  const auto [ec, result] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::malformed);
  EXPECT_EQ(result.message,
            "environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
}

TEST_F(CredentialProviders, TheChainReadsTheEnvironmentWhenMade) {
  auto provider = chain();
  env.set("AWS_ACCESS_KEY_ID", "AKIDLATE");
  env.set("AWS_SECRET_ACCESS_KEY", "late");
  EXPECT_EQ(fetch(*provider).first, credentials_errc::no_credentials);
  EXPECT_FALSE(fetch(*chain()).first);
}

TEST_F(CredentialProviders, StaticProviderCompletesThroughThePost) {
  aws_credentials creds;
  creds.access_key_id = "AKIDSTATIC";
  creds.secret_access_key = "s";
  auto provider = make_static_credentials_provider(io.get_executor(), creds);
  EXPECT_EQ(provider->name(), "explicit");
  bool called = false;
  provider->async_fetch([&](error_code ec, credentials_result result) {
    called = true;
    EXPECT_FALSE(ec);
    EXPECT_EQ(result.credentials.provider, "explicit");
  });
  EXPECT_FALSE(called);  // never inside the initiating call
  io.run();
  EXPECT_TRUE(called);
}

}  // namespace
}  // namespace s3lect
