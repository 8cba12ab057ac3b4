// azure_blob_config: connection strings, the Azure SDKs' environment variables (read only when
// asked), and validation that names the field at fault and never prints a key.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/error.hpp>

#include "connection_string.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <cstdlib>

namespace s3lect {
namespace {

constexpr const char* azurite_string =
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
    "K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";

TEST(AzureConfig, AConnectionStringFillsTheEmptyFields) {
  azure_blob_config config;
  config.container = "locks";
  config.connection_string = azurite_string;
  std::string problem;
  const auto full = config.resolved(problem);
  ASSERT_TRUE(full) << problem;
  EXPECT_EQ(full->account, "devstoreaccount1");
  EXPECT_TRUE(full->account_key.ends_with("GMGw=="));  // the '=' inside a value is kept
  EXPECT_EQ(full->endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_EQ(config.validate(), std::nullopt);
  EXPECT_TRUE(config.answers_authenticated());  // loopback
}

TEST(AzureConfig, ExplicitFieldsWinOverTheConnectionString) {
  azure_blob_config config;
  config.container = "locks";
  config.connection_string = azurite_string;
  config.endpoint = "http://127.0.0.2:10000/devstoreaccount1";
  config.sas_token = "?sv=1&sig=x";
  std::string problem;
  const auto full = config.resolved(problem);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->endpoint, "http://127.0.0.2:10000/devstoreaccount1");
  EXPECT_EQ(full->account_key, "");  // a SAS given here is not mixed with the string's key
  EXPECT_EQ(full->sas_token, "sv=1&sig=x");
}

TEST(AzureConfig, WithoutAnEndpointTheAccountsAzureEndpointIsUsed) {
  std::string problem;
  const auto settings = detail::parse_connection_string(
      "AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn", problem);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->blob_endpoint, "https://acct.blob.core.chinacloudapi.cn");
  azure_blob_config config;
  config.container = "locks";
  config.account = "acct";
  config.account_key = "a2V5";
  std::string unused;
  EXPECT_EQ(config.resolved(unused)->endpoint, "https://acct.blob.core.windows.net");
  EXPECT_TRUE(config.answers_authenticated());
}

TEST(AzureConfig, UseDevelopmentStorageMeansAzuritesDefaults) {
  std::string problem;
  const auto settings = detail::parse_connection_string("UseDevelopmentStorage=true", problem);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->account, "devstoreaccount1");
  EXPECT_EQ(settings->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_FALSE(
      detail::parse_connection_string("UseDevelopmentStorage=true;AccountName=x", problem));
}

TEST(AzureConfig, ValidationNamesTheFieldAndNeverTheKey) {
  azure_blob_config config;
  config.container = "locks";
  config.connection_string = "AccountName=acct;AccountKey";
  EXPECT_EQ(config.validate(), "connection_string: a segment is not Key=Value");
  config.connection_string = "AccountName=a;accountname=b";
  EXPECT_EQ(config.validate(), "connection_string: accountname is given twice");
  config.connection_string.clear();
  EXPECT_NE(config.validate()->find("account: not set"), std::string::npos);
  config.account = "acct";
  EXPECT_NE(config.validate()->find("account_key: not set"), std::string::npos);
  config.account_key = "not base64 secret!";
  const std::string problem = *config.validate();
  EXPECT_NE(problem.find("account_key: is not base64"), std::string::npos);
  EXPECT_EQ(problem.find("secret"), std::string::npos) << problem;
  config.account_key = "a2V5";
  config.container = "Bad_Name";
  EXPECT_NE(config.validate()->find("container:"), std::string::npos);
  config.container = "locks";
  config.endpoint = "http://10.0.0.1:10000/devstoreaccount1";
  EXPECT_EQ(config.validate(), std::nullopt);
  EXPECT_FALSE(config.answers_authenticated());  // plain HTTP off this host
}

TEST(AzureConfig, PutBlobsLimitAndTheBlockSizeAreBoundedByAzures) {
  azure_blob_config config;
  config.container = "locks";
  config.connection_string = azurite_string;
  ASSERT_EQ(config.validate(), std::nullopt);
  EXPECT_EQ(config.max_put_blob_bytes, 5000ull * 1024 * 1024);  // Put Blob's own limit
  config.max_put_blob_bytes = 0;
  EXPECT_NE(config.validate()->find("max_put_blob_bytes:"), std::string::npos);
  config.max_put_blob_bytes = 5000ull * 1024 * 1024 + 1;
  EXPECT_NE(config.validate()->find("max_put_blob_bytes:"), std::string::npos);
  config.max_put_blob_bytes = 1;
  EXPECT_EQ(config.validate(), std::nullopt);
  config.block_bytes = 0;
  EXPECT_NE(config.validate()->find("block_bytes:"), std::string::npos);
  config.block_bytes = 4000ull * 1024 * 1024 + 1;
  EXPECT_NE(config.validate()->find("block_bytes:"), std::string::npos);
  config.block_bytes = 4000ull * 1024 * 1024;
  EXPECT_EQ(config.validate(), std::nullopt);
}

TEST(AzureConfig, ASasWithAnEndpointNeedsNoAccountAndAVerifiedCaNeedsVerification) {
  azure_blob_config config;
  config.container = "locks";
  config.connection_string =
      "BlobEndpoint=https://acct.blob.core.windows.net;"
      "SharedAccessSignature=sv=2025-01-05&sp=rcw&sig=x";
  EXPECT_EQ(config.validate(), std::nullopt);
  config.connection_string = "SharedAccessSignature=sv=2025-01-05&sp=rcw&sig=x";
  EXPECT_NE(config.validate()->find("account: not set"), std::string::npos);  // no endpoint
  config.account = "acct";
  config.tls.verify_peer = false;
  config.tls.ca_file = "/etc/ssl/ca.pem";
  EXPECT_EQ(config.validate(), "tls.verify_peer: is off although a CA is configured");
}

TEST(AzureConfig, TheClientRefusesAnInvalidConfigurationNamingTheField) {
  boost::asio::io_context io;
  azure_blob_config config;
  config.container = "locks";
  try {
    azure_blob_client client(io.get_executor(), config);
    FAIL() << "constructed";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("account"), std::string::npos) << e.what();
  }
}

TEST(AzureConfig, FromEnvironmentReadsTheAzureSdkVariablesAndTheConstructorNone) {
  ::setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_string, 1);
  const azure_blob_config config = azure_blob_config::from_environment("locks");
  EXPECT_EQ(config.connection_string, azurite_string);
  EXPECT_EQ(config.container, "locks");
  ::unsetenv("AZURE_STORAGE_CONNECTION_STRING");
  ::setenv("AZURE_STORAGE_ACCOUNT", "acct", 1);
  ::setenv("AZURE_STORAGE_SAS_TOKEN", "sv=1&sig=x", 1);
  const azure_blob_config sas = azure_blob_config::from_environment("locks");
  EXPECT_EQ(sas.account, "acct");
  EXPECT_EQ(sas.sas_token, "sv=1&sig=x");
  EXPECT_EQ(sas.validate(), std::nullopt);
  // A configuration built by hand does not pick them up.
  azure_blob_config by_hand;
  by_hand.container = "locks";
  EXPECT_NE(by_hand.validate(), std::nullopt);
  ::unsetenv("AZURE_STORAGE_ACCOUNT");
  ::unsetenv("AZURE_STORAGE_SAS_TOKEN");
}

}  // namespace
}  // namespace s3lect
