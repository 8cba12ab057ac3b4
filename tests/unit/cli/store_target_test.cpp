// The store a command reaches: s3://BUCKET/KEY through an s3_client's configuration,
// az://CONTAINER/BLOB through an azure_blob_client's from the Azure SDKs' variables, with the
// S3-only options refused for Azure and errors that name the variables to set, never a key.
#include "cli/options.hpp"
#include "cli/store_options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace s3lect::cli {
namespace {

using namespace std::chrono_literals;

constexpr const char* azurite_string =
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=c2VjcmV0IGtleQ==;"
    "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";

/// Sets AZURE_STORAGE_CONNECTION_STRING for one test and clears the other Azure variables.
struct azure_environment {
  explicit azure_environment(const char* connection_string) {
    for (const char* name : {"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY",
                             "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING"}) {
      ::unsetenv(name);
    }
    if (connection_string) ::setenv("AZURE_STORAGE_CONNECTION_STRING", connection_string, 1);
  }
  ~azure_environment() { ::unsetenv("AZURE_STORAGE_CONNECTION_STRING"); }
};

std::optional<store_target> target_of(const std::vector<std::string>& args, std::string& error) {
  auto parsed = parse_store_command(args, {}, error);
  if (!parsed) return std::nullopt;
  return make_store_target(*parsed, error);
}

TEST(StoreLocation, AzParsesAsAContainerAndABlob) {
  std::string error;
  const auto location = parse_store_location("az://locks/group/leader.json", error);
  ASSERT_TRUE(location) << error;
  EXPECT_TRUE(location->azure);
  EXPECT_EQ(location->bucket, "locks");
  EXPECT_EQ(location->key, "group/leader.json");
  EXPECT_FALSE(parse_store_location("s3://b/k", error)->azure);
  for (const char* bad : {"az://", "az://c", "az://c/", "az:///k", "gs://b/k", "locks/k"}) {
    error.clear();
    EXPECT_FALSE(parse_store_location(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(StoreTarget, AnAzLockTakesTheConnectionStringAndTheOptions) {
  azure_environment environment(azurite_string);
  std::string error;
  const auto target = target_of({"--lock", "az://locks/leader.json", "--request-timeout", "2s",
                                 "--endpoint", "http://127.0.0.1:10001/devstoreaccount1"},
                                error);
  ASSERT_TRUE(target) << error;
  ASSERT_TRUE(target->is_azure());
  EXPECT_EQ(target->url(), "az://locks/leader.json");
  EXPECT_EQ(target->bucket(), "locks");
  EXPECT_EQ(target->key, "leader.json");
  EXPECT_EQ(target->endpoint(), "http://127.0.0.1:10001/devstoreaccount1");  // the option wins
  EXPECT_EQ(target->request_timeout(), 2s);
  EXPECT_EQ(target->azure->account, "devstoreaccount1");
  EXPECT_TRUE(target->answers_authenticated());
}

TEST(StoreTarget, S3OnlyOptionsAreRefusedForAz) {
  azure_environment environment(azurite_string);
  std::string error;
  EXPECT_FALSE(target_of({"--lock", "az://locks/k", "--region", "eu-west-1"}, error));
  EXPECT_EQ(error, "--region does not apply to az:// (Azure Blob Storage)");
  EXPECT_FALSE(target_of({"--lock", "az://locks/k", "--path-style"}, error));
  EXPECT_EQ(error, "--path-style does not apply to az:// (Azure Blob Storage)");
}

TEST(StoreTarget, WithoutCredentialsTheErrorNamesTheVariablesAndNoKeyEverAppears) {
  {
    azure_environment environment(nullptr);
    std::string error;
    EXPECT_FALSE(target_of({"--lock", "az://locks/k"}, error));
    EXPECT_NE(error.find("AZURE_STORAGE_CONNECTION_STRING"), std::string::npos) << error;
  }
  azure_environment environment("AccountName=acct;AccountKey=not base64 secret");
  std::string error;
  EXPECT_FALSE(target_of({"--lock", "az://locks/k"}, error));
  EXPECT_NE(error.find("account_key"), std::string::npos) << error;
  EXPECT_EQ(error.find("secret"), std::string::npos) << error;
}

TEST(StoreTarget, AnS3LockIsUnchanged) {
  std::string error;
  const auto target = target_of(
      {"--lock", "s3://bucket/k", "--endpoint", "http://127.0.0.1:7480", "--region", "r"}, error);
  ASSERT_TRUE(target) << error;
  EXPECT_FALSE(target->is_azure());
  EXPECT_EQ(target->url(), "s3://bucket/k");
  EXPECT_EQ(target->bucket(), "bucket");
  EXPECT_EQ(target->endpoint(), "http://127.0.0.1:7480");
}

}  // namespace
}  // namespace s3lect::cli
