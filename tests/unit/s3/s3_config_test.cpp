// s3_config validation and environment, endpoint parsing and the addressing style.
#include <s3lect/s3_client.hpp>

#include "s3_endpoint.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace s3lect {
namespace {

s3_config valid_config() {
  s3_config config;
  config.bucket = "my-bucket";
  config.endpoint = "http://127.0.0.1:7480";
  config.region = "us-east-1";
  config.creds.access_key_id = "AKID";
  config.creds.secret_access_key = "secret";
  return config;
}

/// The field part of validate()'s message ("field: rule"), or "" when valid.
std::string failing_field(const s3_config& config) {
  const auto problem = config.validate();
  if (!problem) return {};
  return problem->substr(0, problem->find(':'));
}

TEST(S3ConfigValidate, AcceptsAValidConfig) {
  EXPECT_EQ(valid_config().validate(), std::nullopt);
}

TEST(S3ConfigValidate, ChecksBucketNames) {
  for (const char* good : {"abc", "my.bucket-1", "0bucket9",
                           "a23456789012345678901234567890123456789012345678901234567890123"}) {
    auto config = valid_config();
    config.bucket = good;
    EXPECT_EQ(config.validate(), std::nullopt) << good;
  }
  for (const char* bad :
       {"", "ab", "My-Bucket", "-bucket", "bucket-", "bu..cket", "bucket_1", "192.168.1.1",
        "a234567890123456789012345678901234567890123456789012345678901234", "with space"}) {
    auto config = valid_config();
    config.bucket = bad;
    EXPECT_EQ(failing_field(config), "bucket") << bad;
  }
}

TEST(S3ConfigValidate, ChecksEndpoints) {
  for (const char* good : {"http://127.0.0.1:7480", "https://s3.us-east-1.amazonaws.com",
                           "https://minio.internal:9000/", "http://[::1]:9000", "http://[::1]",
                           "http://localhost", "http://s3_gateway:80"}) {
    auto config = valid_config();
    config.endpoint = good;
    EXPECT_EQ(config.validate(), std::nullopt) << good;
  }
  for (const char* bad : {"", "ftp://host", "127.0.0.1:7480", "http://",
                          "http://host:", "http://host:0", "http://host:65536", "http://host:12ab",
                          "http://host/path", "http://host?x=1", "http://user@host", "http://[::1",
                          "http://[nonsense]:80", "http://-bad-.com", "http://a..b"}) {
    auto config = valid_config();
    config.endpoint = bad;
    EXPECT_EQ(failing_field(config), "endpoint") << bad;
  }
}

TEST(S3ConfigValidate, ChecksCredentialsRegionAndLimits) {
  auto config = valid_config();
  config.creds.access_key_id.clear();
  EXPECT_EQ(failing_field(config), "creds.access_key_id");

  config = valid_config();
  config.creds.secret_access_key.clear();
  EXPECT_EQ(failing_field(config), "creds.secret_access_key");

  config = valid_config();
  config.creds.session_token = "line\nbreak";
  EXPECT_EQ(failing_field(config), "creds.session_token");

  config = valid_config();
  config.region.clear();
  EXPECT_EQ(failing_field(config), "region");

  config = valid_config();
  config.region = "us/east";
  EXPECT_EQ(failing_field(config), "region");

  config = valid_config();
  config.request_timeout = std::chrono::milliseconds(-1);
  EXPECT_EQ(failing_field(config), "request_timeout");

  config = valid_config();
  config.request_timeout = std::chrono::milliseconds(0);  // disabled is allowed
  EXPECT_EQ(config.validate(), std::nullopt);

  config = valid_config();
  config.max_body_bytes = 0;
  EXPECT_EQ(failing_field(config), "max_body_bytes");
}

TEST(S3ConfigValidate, ChecksVirtualHostedStyle) {
  auto config = valid_config();
  config.addressing = addressing_style::virtual_hosted;
  EXPECT_EQ(failing_field(config), "addressing");  // IP endpoint

  config.endpoint = "https://s3.example.com";
  config.bucket = "with.dots";
  EXPECT_EQ(failing_field(config), "addressing");

  config.bucket = "no-dots";
  EXPECT_EQ(config.validate(), std::nullopt);
}

/// Sets or unsets the AWS variables for one test and restores them afterwards.
class S3ConfigEnvironment : public ::testing::Test {
 protected:
  static constexpr const char* variables[] = {"AWS_ENDPOINT_URL_S3",
                                              "AWS_ENDPOINT_URL",
                                              "AWS_REGION",
                                              "AWS_DEFAULT_REGION",
                                              "AWS_ACCESS_KEY_ID",
                                              "AWS_SECRET_ACCESS_KEY",
                                              "AWS_SESSION_TOKEN",
                                              "AWS_PROFILE",
                                              "AWS_CONFIG_FILE",
                                              "AWS_SHARED_CREDENTIALS_FILE",
                                              "HOME"};

  void SetUp() override {
    for (const char* name : variables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      unsetenv(name);
    }
    // No profile files either: the region may also come from ~/.aws/config.
    setenv("HOME", "/nonexistent-s3lect-test-home", 1);
  }
  void TearDown() override {
    for (const char* name : variables) {
      unsetenv(name);
      if (auto it = saved_.find(name); it != saved_.end()) setenv(name, it->second.c_str(), 1);
    }
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST_F(S3ConfigEnvironment, DefaultsWithoutEnvironment) {
  s3_config config;
  config.bucket = "my-bucket";
  config.apply_environment();
  // AWS needs the bucket's region: no silent us-east-1 when nothing names one.
  EXPECT_EQ(config.region, "");
  EXPECT_EQ(config.endpoint, "");
  EXPECT_TRUE(config.creds.access_key_id.empty());
  const auto problem = config.validate();
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->rfind("region:", 0), 0u) << *problem;
}

TEST_F(S3ConfigEnvironment, FillsEmptyFields) {
  setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secretenv", 1);
  setenv("AWS_SESSION_TOKEN", "tokenenv", 1);
  s3_config config;
  config.apply_environment();
  EXPECT_EQ(config.region, "eu-west-1");
  EXPECT_EQ(config.endpoint, "https://s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(config.creds.access_key_id, "AKIDENV");
  EXPECT_EQ(config.creds.secret_access_key, "secretenv");
  EXPECT_EQ(config.creds.session_token, "tokenenv");
}

TEST_F(S3ConfigEnvironment, PrefersSpecificVariables) {
  setenv("AWS_REGION", "eu-central-1", 1);
  setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9999", 1);
  s3_config config;
  config.apply_environment();
  EXPECT_EQ(config.region, "eu-central-1");
  EXPECT_EQ(config.endpoint, "http://127.0.0.1:9000");

  unsetenv("AWS_ENDPOINT_URL_S3");
  s3_config second;
  second.apply_environment();
  EXPECT_EQ(second.endpoint, "http://127.0.0.1:9999");
}

TEST_F(S3ConfigEnvironment, KeepsConfiguredValues) {
  setenv("AWS_REGION", "eu-central-1", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9999", 1);
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secretenv", 1);
  setenv("AWS_SESSION_TOKEN", "tokenenv", 1);
  s3_config config = valid_config();
  config.apply_environment();
  EXPECT_EQ(config.region, "us-east-1");
  EXPECT_EQ(config.endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(config.creds.access_key_id, "AKID");
  EXPECT_EQ(config.creds.secret_access_key, "secret");
  // Another identity's session token must not be attached to the configured key.
  EXPECT_TRUE(config.creds.session_token.empty());
}

TEST_F(S3ConfigEnvironment, EmptyVariablesCountAsUnset) {
  setenv("AWS_REGION", "", 1);
  setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
  s3_config config;
  config.apply_environment();
  EXPECT_EQ(config.region, "ap-south-1");
}

// --- endpoint parsing and addressing -------------------------------------------------------

TEST(S3Endpoint, ParsesSchemesHostsAndPorts) {
  std::string problem;
  auto url = detail::parse_endpoint_url("https://s3.amazonaws.com", problem);
  ASSERT_TRUE(url);
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->host, "s3.amazonaws.com");
  EXPECT_EQ(url->port, 443);
  EXPECT_TRUE(url->default_port());
  EXPECT_FALSE(url->host_is_ip());

  url = detail::parse_endpoint_url("http://127.0.0.1:7480/", problem);
  ASSERT_TRUE(url);
  EXPECT_FALSE(url->tls);
  EXPECT_EQ(url->port, 7480);
  EXPECT_TRUE(url->host_is_ipv4);

  url = detail::parse_endpoint_url("https://[::1]:7443", problem);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "::1");
  EXPECT_TRUE(url->host_is_ipv6);
  EXPECT_EQ(url->port, 7443);
}

TEST(S3Endpoint, AutomaticAddressingIsVirtualHostedOnAwsOnly) {
  std::string problem;
  const auto aws = *detail::parse_endpoint_url("https://s3.eu-west-1.amazonaws.com", problem);
  auto addressing = detail::choose_addressing(aws, "my-bucket", addressing_style::automatic);
  EXPECT_EQ(addressing.connect_host, "my-bucket.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(addressing.host_header, "my-bucket.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(addressing.path_bucket, "");

  // Dots break the wildcard certificate over TLS.
  addressing = detail::choose_addressing(aws, "my.bucket", addressing_style::automatic);
  EXPECT_EQ(addressing.connect_host, "s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(addressing.path_bucket, "my.bucket");

  addressing = detail::choose_addressing(aws, "my-bucket", addressing_style::path);
  EXPECT_EQ(addressing.connect_host, "s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(addressing.path_bucket, "my-bucket");

  const auto local = *detail::parse_endpoint_url("http://127.0.0.1:7480", problem);
  addressing = detail::choose_addressing(local, "my-bucket", addressing_style::automatic);
  EXPECT_EQ(addressing.connect_host, "127.0.0.1");
  EXPECT_EQ(addressing.host_header, "127.0.0.1:7480");
  EXPECT_EQ(addressing.path_bucket, "my-bucket");

  const auto minio = *detail::parse_endpoint_url("https://minio.example.com:9000", problem);
  addressing = detail::choose_addressing(minio, "my-bucket", addressing_style::virtual_hosted);
  EXPECT_EQ(addressing.connect_host, "my-bucket.minio.example.com");
  EXPECT_EQ(addressing.host_header, "my-bucket.minio.example.com:9000");

  const auto ipv6 = *detail::parse_endpoint_url("http://[::1]:9000", problem);
  addressing = detail::choose_addressing(ipv6, "my-bucket", addressing_style::automatic);
  EXPECT_EQ(addressing.connect_host, "::1");
  EXPECT_EQ(addressing.host_header, "[::1]:9000");
}

}  // namespace
}  // namespace s3lect
