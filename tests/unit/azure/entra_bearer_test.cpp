// Entra ID tokens end to end against loopback fakes (scripted HTTP servers named fake_*): the
// workload identity provider posts the federated assertion and re-reads the token file, managed
// identity sends `Metadata: true` (IMDS) or X-IDENTITY-HEADER (App Service), azure_blob_client
// sends `Authorization: Bearer`, refreshes ahead of expiry without delaying a request (manual
// clock), drops a token the store refuses, and fails a request with the provider's message when
// no token can be had, never logging the token.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/azure_credentials.hpp>
#include <s3lect/error.hpp>

#include "manual_clock.hpp"
#include "support/fake_aws_endpoints.hpp"
#include "support/run_until_complete.hpp"
#include "support/scripted_http_server.hpp"
#include "support/temporary_file.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using test::http_reply;
using test::recorded_request;
using test::scripted_http_server;
namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

constexpr std::string_view token_answer =
    R"({"access_token":"eyJ.fake-entra-token","expires_in":"3599","token_type":"Bearer"})";

/// Hands out tok-1, tok-2, ... each expiring `lifetime` after the fetch on the executor's clock
/// (a manual one when the test installed it); counts fetches.
class counting_token_provider final : public azure_token_provider {
 public:
  counting_token_provider(asio::any_io_executor executor, std::chrono::seconds lifetime)
      : executor_(std::move(executor)), lifetime_(lifetime) {}

  std::string name() const override { return "counting"; }
  int fetches() const { return fetches_; }

 protected:
  void fetch_impl(asio::any_completion_handler<azure_token_signature> handler) override {
    azure_token token;
    token.access_token = "tok-" + std::to_string(++fetches_);
    token.expires = detail::clock_source::of(executor_).wall_now() + lifetime_;
    asio::post(executor_, [handler = std::move(handler), token = std::move(token)]() mutable {
      std::move(handler)(error_code{}, std::move(token));
    });
  }

 private:
  asio::any_io_executor executor_;
  std::chrono::seconds lifetime_;
  std::atomic<int> fetches_{0};
};

scripted_http_server::script fake_blob_found() {
  return [](const recorded_request&) {
    return http_reply(200, "{}", {"ETag: \"0x8D1\"", "x-ms-request-id: r-1"});
  };
}

class EntraBearer : public ::testing::Test {
 protected:
  azure_blob_config config_for(const scripted_http_server& fake_blob_service,
                               std::shared_ptr<azure_token_provider> provider) {
    azure_blob_config config;
    config.container = "locks";
    config.endpoint = fake_blob_service.endpoint() + "/acct";
    config.token_provider = std::move(provider);
    config.request_timeout = 3s;
    config.log.level = log_level::debug;
    config.log.sink = [this](log_level, std::string_view line) {
      std::lock_guard lock(log_mutex);
      logs.emplace_back(line);
    };
    return config;
  }

  std::pair<error_code, get_result> get(azure_blob_client& client, std::string key) {
    return test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(key, std::move(handler)); });
  }

  std::pair<error_code, azure_token> fetch(azure_token_provider& provider) {
    return test::run_until_complete<azure_token>(
        io, [&](auto handler) { provider.async_fetch(std::move(handler)); });
  }

  void expect_not_logged(std::string_view secret) {
    std::lock_guard lock(log_mutex);
    for (const auto& line : logs) EXPECT_EQ(line.find(secret), std::string::npos) << line;
  }

  asio::io_context io;
  std::mutex log_mutex;
  std::vector<std::string> logs;
};

TEST_F(EntraBearer, WorkloadIdentityPostsTheAssertionAndRereadsTheTokenFile) {
  scripted_http_server fake_entra_id(
      [](const recorded_request&) { return http_reply(200, std::string(token_answer)); });
  test::temporary_file token_file("assertion-one\n");
  azure_workload_identity_options options;
  options.token_file = token_file.path();
  options.client_id = "client-1";
  options.tenant_id = "tenant-1";
  options.authority_host = fake_entra_id.endpoint() + "/";
  auto provider = make_azure_workload_identity_provider(io.get_executor(), options);

  auto [ec, token] = fetch(*provider);
  ASSERT_FALSE(ec) << token.message;
  EXPECT_EQ(token.access_token, "eyJ.fake-entra-token");
  EXPECT_EQ(token.provider, "workload-identity");
  ASSERT_TRUE(token.expires);
  std::ofstream(token_file.path()) << "assertion-two";  // the kubelet rotated it
  ASSERT_FALSE(fetch(*provider).first);

  const auto requests = fake_entra_id.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/tenant-1/oauth2/v2.0/token");
  EXPECT_EQ(requests[0].header("Content-Type"), "application/x-www-form-urlencoded");
  const auto first = test::decode_form(requests[0].body);
  EXPECT_EQ(first.at("grant_type"), "client_credentials");
  EXPECT_EQ(first.at("client_id"), "client-1");
  EXPECT_EQ(first.at("scope"), "https://storage.azure.com/.default");
  EXPECT_EQ(first.at("client_assertion_type"),
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  EXPECT_EQ(first.at("client_assertion"), "assertion-one");
  EXPECT_EQ(test::decode_form(requests[1].body).at("client_assertion"), "assertion-two");
}

TEST_F(EntraBearer, WorkloadIdentityWithoutItsVariablesNamesTheMissingOne) {
  azure_workload_identity_options options;
  options.token_file = "/nonexistent/token";
  options.client_id = "client-1";
  auto provider = make_azure_workload_identity_provider(io.get_executor(), options);
  auto [ec, token] = fetch(*provider);
  EXPECT_EQ(ec, credentials_errc::not_configured);
  EXPECT_EQ(token.message, "workload-identity: AZURE_TENANT_ID is not set");
}

TEST_F(EntraBearer, ManagedIdentityAsksImdsWithMetadataTrue) {
  scripted_http_server fake_imds(
      [](const recorded_request&) { return http_reply(200, std::string(token_answer)); });
  azure_managed_identity_options options;
  options.imds_endpoint = fake_imds.endpoint();
  options.client_id = "user-assigned-1";
  auto provider = make_azure_managed_identity_provider(io.get_executor(), options);
  auto [ec, token] = fetch(*provider);
  ASSERT_FALSE(ec) << token.message;
  EXPECT_EQ(token.provider, "managed-identity");
  const auto requests = fake_imds.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target,
            "/metadata/identity/oauth2/token?api-version=2018-02-01"
            "&resource=https%3A%2F%2Fstorage.azure.com%2F&client_id=user-assigned-1");
  EXPECT_EQ(requests[0].header("Metadata"), "true");
}

TEST_F(EntraBearer, AppServiceUsesItsIdentityEndpointAndHeader) {
  scripted_http_server fake_app_service(
      [](const recorded_request&) { return http_reply(200, std::string(token_answer)); });
  azure_managed_identity_options options;
  options.imds_endpoint = "http://127.0.0.1:1";  // must not be asked
  options.identity_endpoint = fake_app_service.endpoint() + "/msi/token";
  options.identity_header = "identity-header-secret";
  auto provider = make_azure_managed_identity_provider(io.get_executor(), options);
  ASSERT_FALSE(fetch(*provider).first);
  const auto requests = fake_app_service.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target,
            "/msi/token?api-version=2019-08-01&resource=https%3A%2F%2Fstorage.azure.com%2F");
  EXPECT_EQ(requests[0].header("X-IDENTITY-HEADER"), "identity-header-secret");
  EXPECT_EQ(requests[0].header("Metadata"), "");
}

TEST_F(EntraBearer, BlobRequestsCarryTheCachedBearerToken) {
  scripted_http_server fake_imds(
      [](const recorded_request&) { return http_reply(200, std::string(token_answer)); });
  scripted_http_server fake_blob_service(fake_blob_found());
  azure_managed_identity_options options;
  options.imds_endpoint = fake_imds.endpoint();
  azure_blob_client client(io.get_executor(),
                           config_for(fake_blob_service, make_azure_managed_identity_provider(
                                                             io.get_executor(), options)));
  ASSERT_FALSE(get(client, "leader").first);
  ASSERT_FALSE(get(client, "leader").first);
  EXPECT_EQ(fake_imds.requests().size(), 1u);  // cached
  const auto requests = fake_blob_service.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.header("Authorization"), "Bearer eyJ.fake-entra-token");
    EXPECT_EQ(request.header("x-ms-version"), "2025-01-05");
    EXPECT_EQ(request.target, "/acct/locks/leader");  // no SAS query
  }
  expect_not_logged("fake-entra-token");
}

TEST_F(EntraBearer, ARefreshAheadOfExpiryRunsInTheBackground) {
  // The token cache and the provider read the wall clock of this manual clock.
  detail::manual_clock& clock = detail::manual_clock::install(io);
  scripted_http_server fake_blob_service(fake_blob_found());
  // Expire 5 min + 2 s after each fetch: the refresh falls due 2 s after the first one.
  auto provider = std::make_shared<counting_token_provider>(io.get_executor(), 302s);
  azure_blob_client client(io.get_executor(), config_for(fake_blob_service, provider));
  ASSERT_FALSE(get(client, "a").first);
  ASSERT_EQ(provider->fetches(), 1);
  clock.advance(1900ms);
  ASSERT_FALSE(get(client, "b").first);
  EXPECT_EQ(provider->fetches(), 1);  // not due yet

  clock.advance(200ms);
  ASSERT_FALSE(get(client, "c").first);  // sent with tok-1 while tok-2 is fetched
  io.restart();
  io.poll();
  ASSERT_FALSE(get(client, "d").first);
  EXPECT_EQ(provider->fetches(), 2);
  const auto requests = fake_blob_service.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2].header("Authorization"), "Bearer tok-1");
  EXPECT_EQ(requests[3].header("Authorization"), "Bearer tok-2");
}

TEST_F(EntraBearer, ARefusedTokenIsFetchedAnewForTheNextRequest) {
  std::atomic<int> served{0};
  scripted_http_server fake_blob_service([&served](const recorded_request&) {
    if (served++ == 0) {
      return http_reply(401,
                        "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>"
                        "InvalidAuthenticationInfo</Code><Message>Lifetime validation failed."
                        "</Message></Error>",
                        {"x-ms-request-id: r-1", "x-ms-error-code: InvalidAuthenticationInfo",
                         "Content-Type: application/xml"});
    }
    return http_reply(200, "{}", {"ETag: \"0x8D1\"", "x-ms-request-id: r-2"});
  });
  auto provider = std::make_shared<counting_token_provider>(io.get_executor(), 3600s);
  azure_blob_client client(io.get_executor(), config_for(fake_blob_service, provider));
  EXPECT_EQ(get(client, "a").first, errc::invalid_access_key);
  ASSERT_FALSE(get(client, "b").first);
  EXPECT_EQ(provider->fetches(), 2);
  EXPECT_EQ(fake_blob_service.requests().at(1).header("Authorization"), "Bearer tok-2");
}

TEST_F(EntraBearer, AFailedFetchFailsTheRequestNamingTheProvider) {
  scripted_http_server fake_imds([](const recorded_request&) {
    return http_reply(400,
                      R"({"error":"invalid_request","error_description":"Identity not found"})");
  });
  scripted_http_server fake_blob_service(fake_blob_found());
  azure_managed_identity_options options;
  options.imds_endpoint = fake_imds.endpoint();
  azure_blob_client client(io.get_executor(),
                           config_for(fake_blob_service, make_azure_managed_identity_provider(
                                                             io.get_executor(), options)));
  auto [ec, result] = get(client, "leader");
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.info.message,
            "credentials: managed-identity: the token endpoint answered HTTP 400: "
            "invalid_request: Identity not found");
  EXPECT_TRUE(fake_blob_service.requests().empty());
  EXPECT_EQ(client.stats().failures, 1u);
}

TEST_F(EntraBearer, AMissingTokenFileFailsTheRequestNamingTheFile) {
  scripted_http_server fake_blob_service(fake_blob_found());
  azure_workload_identity_options options;
  options.token_file = "/nonexistent/s3lect-token";
  options.client_id = "client-1";
  options.tenant_id = "tenant-1";
  options.authority_host = "http://127.0.0.1:1/";
  azure_blob_client client(io.get_executor(),
                           config_for(fake_blob_service, make_azure_workload_identity_provider(
                                                             io.get_executor(), options)));
  auto [ec, result] = get(client, "leader");
  EXPECT_EQ(ec, credentials_errc::fetch_failed);
  EXPECT_EQ(result.info.message,
            "credentials: workload-identity: token file /nonexistent/s3lect-token does not exist");
}

// --- azure_blob_config with tokens --------------------------------------------------------------

TEST(EntraBearerConfig, ATokenProviderAuthorisesWithAnEndpointOrAnAccount) {
  asio::io_context io;
  azure_blob_config config;
  config.container = "locks";
  config.token_provider = std::make_shared<counting_token_provider>(io.get_executor(), 3600s);
  EXPECT_NE(config.validate()->find("account: not set"), std::string::npos);
  config.account = "acct";
  EXPECT_EQ(config.validate(), std::nullopt);  // Azure's endpoint for the account
  config.account.clear();
  config.endpoint = "http://127.0.0.1:10000/devstoreaccount1";
  EXPECT_EQ(config.validate(), std::nullopt);
  config.account = "acct";
  config.token_provider.reset();
  EXPECT_NE(config.validate()->find("token_provider"), std::string::npos);
}

TEST(EntraBearerConfig, FromEnvironmentTurnsToEntraIdWhenNoSecretIsSet) {
  test::scoped_aws_environment aws_env;
  for (const char* name :
       {"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN"}) {
    ::unsetenv(name);
  }
  ::setenv("AZURE_STORAGE_ACCOUNT", "acct", 1);
  const azure_blob_config entra = azure_blob_config::from_environment("locks");
  EXPECT_TRUE(entra.use_default_token_chain);
  EXPECT_EQ(entra.validate(), std::nullopt);
  ::setenv("AZURE_STORAGE_SAS_TOKEN", "sv=1&sig=x", 1);
  EXPECT_FALSE(azure_blob_config::from_environment("locks").use_default_token_chain);
  ::unsetenv("AZURE_STORAGE_SAS_TOKEN");
  ::unsetenv("AZURE_STORAGE_ACCOUNT");
}

TEST(EntraBearerConfig, TheDefaultChainPicksWorkloadIdentityWhenItsFileIsSet) {
  asio::io_context io;
  ::setenv("AZURE_FEDERATED_TOKEN_FILE", "/var/run/secrets/azure/tokens/azure-identity-token", 1);
  EXPECT_EQ(make_azure_default_token_chain(io.get_executor())->name(), "workload-identity");
  ::unsetenv("AZURE_FEDERATED_TOKEN_FILE");
  EXPECT_EQ(make_azure_default_token_chain(io.get_executor())->name(), "managed-identity");
}

}  // namespace
}  // namespace s3lect
