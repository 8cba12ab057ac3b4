// The S3 client with credential providers, against a scripted loopback S3: which credentials
// sign, the session token header, failures reported with the provider's message, a background
// refresh that never delays a request, ExpiredToken; and how s3_config resolves the region, the
// endpoint and the addressing style for AWS.
#include <s3lect/credentials.hpp>
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "manual_clock.hpp"
#include "s3_endpoint.hpp"
#include "support/fake_aws_endpoints.hpp"
#include "support/run_until_complete.hpp"
#include "support/scripted_http_server.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <string>

namespace s3lect {
namespace {

using test::http_reply;
using test::recorded_request;
using test::scripted_http_server;
using test::scripted_reply;
namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;

/// Hands out AKID1, AKID2, ... each expiring `lifetime` after the fetch (on the executor's
/// clock: a manual one when the test installed it); counts fetches.
class counting_provider final : public credentials_provider {
 public:
  counting_provider(asio::any_io_executor executor, std::chrono::seconds lifetime)
      : executor_(std::move(executor)), lifetime_(lifetime) {}

  std::string name() const override { return "counting"; }
  int fetches() const { return fetches_; }

 protected:
  void fetch_impl(asio::any_completion_handler<credentials_signature> handler) override {
    credentials_result result;
    result.credentials.access_key_id = "AKID" + std::to_string(++fetches_);
    result.credentials.secret_access_key = "counting-secret";
    result.credentials.session_token = "token-" + std::to_string(fetches_);
    result.credentials.expiration = detail::clock_source::of(executor_).wall_now() + lifetime_;
    asio::post(executor_, [handler = std::move(handler), result = std::move(result)]() mutable {
      std::move(handler)(error_code{}, std::move(result));
    });
  }

 private:
  asio::any_io_executor executor_;
  std::chrono::seconds lifetime_;
  std::atomic<int> fetches_{0};
};

std::string credential_of(const recorded_request& request) {
  const std::string authorization = request.header("Authorization");
  const std::size_t start = authorization.find("Credential=");
  if (start == std::string::npos) return {};
  return authorization.substr(start + 11, authorization.find('/', start) - start - 11);
}

class CredentialsClient : public ::testing::Test {
 protected:
  s3_config config_for(const scripted_http_server& server) {
    s3_config config;
    config.bucket = "test-bucket";
    config.endpoint = server.endpoint();
    config.region = "us-east-1";
    config.request_timeout = 3s;
    config.log.level = log_level::debug;
    config.log.sink = [this](log_level, std::string_view line) {
      std::lock_guard lock(log_mutex);
      logs.emplace_back(line);
    };
    return config;
  }

  std::pair<error_code, get_result> get(s3_client& client, std::string key) {
    return test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(key, std::move(handler)); });
  }

  void expect_no_secret_logged(std::string_view secret) {
    std::lock_guard lock(log_mutex);
    for (const auto& line : logs) EXPECT_EQ(line.find(secret), std::string::npos) << line;
  }

  test::scoped_aws_environment env;
  asio::io_context io;
  std::mutex log_mutex;
  std::vector<std::string> logs;
};

scripted_http_server::script found() {
  return [](const recorded_request&) { return http_reply(200, "{}", {"ETag: \"e1\""}); };
}

TEST_F(CredentialsClient, SignsWithTheProvidersCredentialsAndSessionToken) {
  scripted_http_server server(found());
  auto config = config_for(server);
  auto provider = std::make_shared<counting_provider>(io.get_executor(), 1h);
  config.creds_provider = provider;
  s3_client client(io.get_executor(), config);
  EXPECT_EQ(client.credentials_in_use().provider, "");  // nothing fetched yet

  ASSERT_FALSE(get(client, "a").first);
  ASSERT_FALSE(get(client, "b").first);

  EXPECT_EQ(provider->fetches(), 1);  // cached between requests
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(credential_of(request), "AKID1");
    EXPECT_EQ(request.header("x-amz-security-token"), "token-1");
    EXPECT_NE(request.header("Authorization").find("x-amz-security-token"), std::string::npos);
  }
  const credentials_origin origin = client.credentials_in_use();
  EXPECT_EQ(origin.provider, "counting");
  EXPECT_EQ(origin.access_key_id, "AKID1");
  EXPECT_TRUE(origin.expiration);
  expect_no_secret_logged("counting-secret");
}

TEST_F(CredentialsClient, ExplicitKeysWinOverAProvider) {
  scripted_http_server server(found());
  auto config = config_for(server);
  auto provider = std::make_shared<counting_provider>(io.get_executor(), 1h);
  config.creds_provider = provider;
  config.creds.access_key_id = "AKIDEXPLICIT";
  config.creds.secret_access_key = "explicit-secret";
  s3_client client(io.get_executor(), config);
  ASSERT_FALSE(get(client, "a").first);
  EXPECT_EQ(provider->fetches(), 0);
  EXPECT_EQ(credential_of(server.requests().at(0)), "AKIDEXPLICIT");
  EXPECT_EQ(server.requests().at(0).header("x-amz-security-token"), "");
  EXPECT_EQ(client.credentials_in_use().provider, "explicit");
}

TEST_F(CredentialsClient, EnvironmentKeysAreLabelled) {
  scripted_http_server server(found());
  env.set("AWS_ACCESS_KEY_ID", "AKIDFROMENV");
  env.set("AWS_SECRET_ACCESS_KEY", "env-secret");
  s3_client client(io.get_executor(), config_for(server));
  EXPECT_EQ(client.credentials_in_use().provider, "environment");
  EXPECT_EQ(client.credentials_in_use().access_key_id, "AKIDFROMENV");
  ASSERT_FALSE(get(client, "a").first);
  EXPECT_EQ(credential_of(server.requests().at(0)), "AKIDFROMENV");
}

TEST_F(CredentialsClient, TheDefaultChainReachesTheContainerEndpoint) {
  scripted_http_server server(found());
  test::fake_container_endpoint container;
  test::served_credentials served;
  served.access_key_id = "ASIACONTAINER";
  container.set_credentials(served);
  env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.full_uri());
  s3_client client(io.get_executor(), config_for(server));

  ASSERT_FALSE(get(client, "a").first);
  EXPECT_EQ(credential_of(server.requests().at(0)), "ASIACONTAINER");
  EXPECT_EQ(server.requests().at(0).header("x-amz-security-token"), served.session_token);
  EXPECT_EQ(client.credentials_in_use().provider, "container");
  expect_no_secret_logged(served.secret_access_key);
}

TEST_F(CredentialsClient, NoCredentialsFailsTheRequestWithTheChainsMessage) {
  scripted_http_server server(found());
  s3_client client(io.get_executor(), config_for(server));
  const auto [ec, result] = get(client, "a");
  EXPECT_EQ(ec, credentials_errc::no_credentials);
  EXPECT_EQ(result.info.message.rfind("credentials: no provider applies (environment: ", 0), 0u)
      << result.info.message;
  EXPECT_TRUE(server.requests().empty());
  EXPECT_EQ(client.stats().failures, 1u);
  EXPECT_FALSE(is_transient(ec));
}

TEST_F(CredentialsClient, ARefreshDueRunsInTheBackgroundWithoutDelayingRequests) {
  // The credential cache and the provider read the wall clock of this manual clock.
  detail::manual_clock& clock = detail::manual_clock::install(io);
  scripted_http_server server(found());
  auto config = config_for(server);
  // Expire 5 min + 2 s after each fetch: the refresh falls due 2 s after the first one.
  auto provider = std::make_shared<counting_provider>(io.get_executor(), 302s);
  config.creds_provider = provider;
  s3_client client(io.get_executor(), config);
  ASSERT_FALSE(get(client, "a").first);
  ASSERT_EQ(provider->fetches(), 1);

  clock.advance(2100ms);
  ASSERT_FALSE(get(client, "b").first);  // signed with AKID1 while AKID2 is fetched
  io.restart();
  io.poll();
  ASSERT_FALSE(get(client, "c").first);
  EXPECT_EQ(provider->fetches(), 2);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(credential_of(requests[1]), "AKID1");
  EXPECT_EQ(credential_of(requests[2]), "AKID2");
}

TEST_F(CredentialsClient, ExpiredTokenMakesTheNextRequestFetchAnew) {
  std::atomic<int> served{0};
  scripted_http_server server([&served](const recorded_request&) {
    if (served++ == 0) {
      return test::s3_error_reply(400, "ExpiredToken", "The provided token has expired.");
    }
    return http_reply(200, "{}", {"ETag: \"e1\""});
  });
  auto config = config_for(server);
  auto provider = std::make_shared<counting_provider>(io.get_executor(), 1h);
  config.creds_provider = provider;
  s3_client client(io.get_executor(), config);
  EXPECT_TRUE(get(client, "a").first);
  ASSERT_FALSE(get(client, "b").first);
  EXPECT_EQ(provider->fetches(), 2);
  EXPECT_EQ(credential_of(server.requests().at(1)), "AKID2");
}

// --- s3_config: region, endpoint and addressing for AWS -----------------------------------------

TEST_F(CredentialsClient, AMissingRegionFailsValidationForAws) {
  s3_config config;
  config.bucket = "my-bucket";
  config.apply_environment();
  EXPECT_EQ(config.region, "");
  EXPECT_EQ(config.endpoint, "");
  const auto problem = config.validate();
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rfind("region: not set, and AWS needs the bucket's region", 0), 0u)
      << *problem;

  s3_config explicit_aws;
  explicit_aws.bucket = "my-bucket";
  explicit_aws.endpoint = "https://s3.amazonaws.com";
  explicit_aws.apply_environment();
  ASSERT_TRUE(explicit_aws.validate());
  EXPECT_EQ(explicit_aws.validate()->rfind("region: not set", 0), 0u);
}

TEST_F(CredentialsClient, ACustomEndpointStillDefaultsToUsEast1) {
  s3_config config;
  config.bucket = "my-bucket";
  config.endpoint = "http://127.0.0.1:7480";
  config.apply_environment();
  EXPECT_EQ(config.region, "us-east-1");
  EXPECT_EQ(config.validate(), std::nullopt);

  env.set("AWS_ENDPOINT_URL", "https://minio.internal:9000");
  s3_config from_env;
  from_env.bucket = "my-bucket";
  from_env.apply_environment();
  EXPECT_EQ(from_env.region, "us-east-1");
  EXPECT_EQ(from_env.endpoint, "https://minio.internal:9000");
}

TEST_F(CredentialsClient, TheRegionComesFromTheProfileAndPicksTheRegionalEndpoint) {
  env.write_file(".aws/config",
                 "[default]\nregion = eu-west-3\n[profile cn]\nregion = cn-north-1\n");
  s3_config config;
  config.bucket = "my-bucket";
  config.apply_environment();
  EXPECT_EQ(config.region, "eu-west-3");
  EXPECT_EQ(config.endpoint, "https://s3.eu-west-3.amazonaws.com");
  EXPECT_EQ(config.validate(), std::nullopt);

  std::string problem;
  const auto url = detail::parse_endpoint_url(config.endpoint, problem);
  ASSERT_TRUE(url);
  auto addressing = detail::choose_addressing(*url, config.bucket, config.addressing);
  EXPECT_EQ(addressing.connect_host, "my-bucket.s3.eu-west-3.amazonaws.com");
  EXPECT_EQ(addressing.path_bucket, "");
  addressing = detail::choose_addressing(*url, "dotted.bucket", config.addressing);
  EXPECT_EQ(addressing.connect_host, "s3.eu-west-3.amazonaws.com");
  EXPECT_EQ(addressing.path_bucket, "dotted.bucket");

  env.set("AWS_PROFILE", "cn");
  s3_config china;
  china.bucket = "my-bucket";
  china.apply_environment();
  EXPECT_EQ(china.endpoint, "https://s3.cn-north-1.amazonaws.com.cn");

  env.set("AWS_REGION", "ap-south-1");  // the environment wins over the profile
  s3_config overridden;
  overridden.bucket = "my-bucket";
  overridden.apply_environment();
  EXPECT_EQ(overridden.region, "ap-south-1");
}

TEST_F(CredentialsClient, HalfAnExplicitKeyPairIsInvalid) {
  s3_config config;
  config.bucket = "my-bucket";
  config.endpoint = "http://127.0.0.1:7480";
  config.region = "us-east-1";
  EXPECT_EQ(config.validate(), std::nullopt);  // no keys: the chain supplies them
  config.creds.access_key_id = "AKID";
  EXPECT_EQ(config.validate()->rfind("creds.secret_access_key:", 0), 0u);
  config.creds.access_key_id.clear();
  config.creds.secret_access_key = "secret";
  EXPECT_EQ(config.validate()->rfind("creds.access_key_id:", 0), 0u);
}

}  // namespace
}  // namespace s3lect
