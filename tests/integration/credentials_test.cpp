// End to end: every credential provider, served the local radosgw user's keys by its loopback
// fake (or by real files in a temporary HOME), signs requests the local radosgw accepts; a
// refresh against the store; and `s3lect check` naming the provider. No traffic leaves
// 127.0.0.1: scoped_aws_environment keeps IMDS disabled unless a test points it at its fake.
#include <s3lect/credentials.hpp>
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "support/fake_aws_endpoints.hpp"
#include "support/local_s3_test.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

constexpr std::string_view role_arn = "arn:aws:iam::123456789012:role/s3lect-e2e";
constexpr std::string_view web_token = "e2e-web-identity-token";

class CredentialsIntegration : public test::local_s3_test {
 protected:
  /// The radosgw user's keys as a credential endpoint hands them out, with a session token:
  /// the client sends and signs x-amz-security-token, and radosgw (which checks the signature
  /// over every signed header but ignores tokens for a plain user's key) accepts the request.
  test::served_credentials store_keys(std::chrono::seconds lifetime = 1h) const {
    test::served_credentials served;
    served.access_key_id = s3.access_key;
    served.secret_access_key = s3.secret_key;
    served.session_token = "e2e-session-token";
    served.expiration = std::chrono::system_clock::now() + lifetime;
    return served;
  }

  /// The store, and no credentials: the client must find them itself.
  s3_config config() const {
    s3_config config = s3.config(false);
    config.creds = {};
    return config;
  }

  /// Creates, reads back and deletes a scratch object; returns the first failure.
  std::string round_trip(s3_client& client) {
    const std::string key = "credentials-test/" + test::unique_suffix();
    const std::string body = R"({"probe":")" + key + "\"}";
    auto [put_ec, put] = test::run_until_complete<put_result>(io, [&](auto handler) {
      client.async_put(key, body, put_condition::absent(), std::move(handler));
    });
    if (put_ec) return "PUT: " + put_ec.message() + " " + put.info.message;
    auto [get_ec, got] = test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(key, std::move(handler)); });
    if (get_ec) return "GET: " + get_ec.message() + " " + got.info.message;
    if (!got.found || got.found->body != body) return "GET: wrong body";
    auto [delete_ec, removed] = test::run_until_complete<response_info>(
        io, [&](auto handler) { client.async_delete(key, std::move(handler)); });
    if (delete_ec) return "DELETE: " + delete_ec.message() + " " + removed.message;
    return {};
  }

  void expect_provider_works(std::string_view provider) {
    s3_client client(io.get_executor(), config());
    EXPECT_EQ(round_trip(client), "");
    EXPECT_EQ(client.credentials_in_use().provider, provider);
    EXPECT_EQ(client.credentials_in_use().access_key_id, s3.access_key);
  }

  test::scoped_aws_environment env;
  asio::io_context io;
};

TEST_F(CredentialsIntegration, Environment) {
  env.set("AWS_ACCESS_KEY_ID", s3.access_key);
  env.set("AWS_SECRET_ACCESS_KEY", s3.secret_key);
  expect_provider_works("environment");
}

TEST_F(CredentialsIntegration, EnvironmentThroughTheChainAsACustomProvider) {
  env.set("AWS_ACCESS_KEY_ID", s3.access_key);
  env.set("AWS_SECRET_ACCESS_KEY", s3.secret_key);
  s3_config with_chain = config();
  with_chain.creds_provider = make_default_credentials_chain(io.get_executor());
  env.unset("AWS_ACCESS_KEY_ID");  // the chain captured the environment when made
  env.unset("AWS_SECRET_ACCESS_KEY");
  s3_client client(io.get_executor(), with_chain);
  EXPECT_EQ(round_trip(client), "");
  EXPECT_EQ(client.credentials_in_use().provider, "environment");
}

TEST_F(CredentialsIntegration, ProfileInTheCredentialsFile) {
  env.write_file(".aws/credentials", "[default]\naws_access_key_id = " + s3.access_key +
                                         "\naws_secret_access_key = " + s3.secret_key + "\n");
  expect_provider_works("profile default");
}

TEST_F(CredentialsIntegration, NamedProfileInTheConfigFile) {
  env.write_file(".aws/config",
                 "[default]\nregion = us-east-1\n[profile store]\n"
                 "aws_access_key_id = " +
                     s3.access_key + "\naws_secret_access_key = " + s3.secret_key + "\n");
  env.set("AWS_PROFILE", "store");
  expect_provider_works("profile store");
}

TEST_F(CredentialsIntegration, WebIdentityThroughSts) {
  test::fake_sts sts{std::string(role_arn), std::string(web_token)};
  sts.set_credentials(store_keys());
  env.set("AWS_WEB_IDENTITY_TOKEN_FILE", env.write_file("token", std::string(web_token)));
  env.set("AWS_ROLE_ARN", std::string(role_arn));
  env.set("AWS_ENDPOINT_URL_STS", sts.endpoint());
  expect_provider_works("web-identity");
  EXPECT_EQ(sts.credentials_served(), 1u);
}

TEST_F(CredentialsIntegration, ContainerEndpoint) {
  test::fake_container_endpoint container;
  container.set_credentials(store_keys());
  container.require_authorization("e2e-container-token");
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.full_uri());
  env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
          env.write_file("container-token", "e2e-container-token"));
  expect_provider_works("container");
  EXPECT_EQ(container.credentials_served(), 1u);
}

TEST_F(CredentialsIntegration, InstanceMetadata) {
  test::fake_imds imds;
  imds.set_credentials(store_keys());
  env.unset("AWS_EC2_METADATA_DISABLED");
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint());
  expect_provider_works("imds");
  EXPECT_EQ(imds.credentials_served(), 1u);
  EXPECT_EQ(imds.unauthorized(), 0u);
}

TEST_F(CredentialsIntegration, WrongKeysFromAProviderAreRefusedByTheStore) {
  test::fake_imds imds;
  test::served_credentials wrong = store_keys();
  wrong.secret_access_key = "not-the-store-secret-000000000000000000";
  imds.set_credentials(wrong);
  env.unset("AWS_EC2_METADATA_DISABLED");
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint());
  s3_client client(io.get_executor(), config());
  auto [ec, result] = test::run_until_complete<get_result>(
      io, [&](auto handler) { client.async_get("credentials-test/absent", std::move(handler)); });
  EXPECT_EQ(ec, errc::signature_mismatch) << ec.message();
}

TEST_F(CredentialsIntegration, RefreshAheadOfExpiryAgainstTheStore) {
  test::fake_imds imds;
  imds.set_credentials(store_keys(302s));  // due for refresh 2 s after each fetch
  env.unset("AWS_EC2_METADATA_DISABLED");
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint());
  s3_client client(io.get_executor(), config());
  ASSERT_EQ(round_trip(client), "");
  ASSERT_EQ(imds.credentials_served(), 1u);

  std::this_thread::sleep_for(2200ms);
  imds.set_credentials(store_keys(1h));
  const auto before = client.credentials_in_use().expiration;
  ASSERT_EQ(round_trip(client), "");  // the first request starts the refresh, none waits on it
  // The refresh runs in the background on io and may outlast the round trip (a TSan build on a
  // loaded machine): run io until the new credentials are in use, or 10 s have passed.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  io.restart();
  while (client.credentials_in_use().expiration == before &&
         std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(100ms);
  }
  EXPECT_EQ(imds.credentials_served(), 2u);
  ASSERT_TRUE(client.credentials_in_use().expiration);
  EXPECT_GT(*client.credentials_in_use().expiration, *before + 30min);
  ASSERT_EQ(round_trip(client), "");
  EXPECT_EQ(imds.credentials_served(), 2u);
}

std::string cli_path() {
  if (const char* configured = std::getenv("S3LECT_CLI"); configured && *configured) {
    return configured;
  }
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  return (self.parent_path().parent_path() / "bin" / "s3lect").string();
}

TEST_F(CredentialsIntegration, CheckReportsTheProvider) {
  ASSERT_TRUE(std::filesystem::exists(cli_path())) << cli_path() << " is missing";
  test::fake_imds imds;
  imds.set_credentials(store_keys());
  env.unset("AWS_EC2_METADATA_DISABLED");
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint());
  env.set("AWS_REGION", s3.region);
  const std::string command = cli_path() + " check --lock s3://" + s3.bucket +
                              "/credentials-test/check-" + test::unique_suffix() +
                              ".json --endpoint " + s3.http_endpoint + " --path-style 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("credentials: from imds (access key id ****" +
                        s3.access_key.substr(s3.access_key.size() - 4) + ", temporary, expire in "),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find(s3.secret_key), std::string::npos);
  EXPECT_NE(output.find("result: safe for s3lect"), std::string::npos) << output;
}

}  // namespace
}  // namespace s3lect
