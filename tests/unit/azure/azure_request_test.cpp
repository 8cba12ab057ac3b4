// The requests of the Azure client: paths, conditions, metadata names as Azure wants them
// (C# identifiers: '-' sent as '_'), and Shared Key or SAS authorisation.
#include "azure_request.hpp"

#include <gtest/gtest.h>

#include <string>

namespace s3lect::detail {
namespace {

std::string header(const http_request& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key == name) return value;
  }
  return "<none>";
}

blob_endpoint azurite() {
  std::string problem;
  return *parse_blob_endpoint("http://127.0.0.1:10000/devstoreaccount1/", problem);
}

blob_authorization shared_key() {
  return {"devstoreaccount1", "0123456789abcdef", "", ""};
}

TEST(AzureRequest, AConditionalPutCarriesItsConditionTypeAndMetadata) {
  put_condition condition = put_condition::matches("0x8DC1");
  object_metadata metadata{{"s3lect-term", "7"}};
  blob_request_parts parts;
  parts.body = "{}";
  parts.condition = &condition;
  parts.metadata = &metadata;
  const http_request request = build_blob_request(azurite(), "locks", shared_key(),
                                                  s3_operation::put_if_match, "a b/c.json", parts);
  EXPECT_EQ(request.method, "PUT");
  EXPECT_EQ(request.target, "/devstoreaccount1/locks/a%20b/c.json");
  EXPECT_EQ(header(request, "Host"), "127.0.0.1:10000");
  EXPECT_EQ(header(request, "If-Match"), "\"0x8DC1\"");
  EXPECT_EQ(header(request, "x-ms-blob-type"), "BlockBlob");
  EXPECT_EQ(header(request, "x-ms-version"), "2025-01-05");
  EXPECT_EQ(header(request, "x-ms-meta-s3lect_term"), "7");
  EXPECT_TRUE(header(request, "Authorization").starts_with("SharedKey devstoreaccount1:"));
  EXPECT_EQ(request.body, "{}");

  put_condition absent = put_condition::absent();
  parts.condition = &absent;
  const http_request create =
      build_blob_request(azurite(), "locks", shared_key(), s3_operation::put_if_absent, "k", parts);
  EXPECT_EQ(header(create, "If-None-Match"), "*");
  EXPECT_EQ(header(create, "If-Match"), "<none>");
}

TEST(AzureRequest, WithASasTheTokenIsTheQueryAndNothingIsSigned) {
  const blob_authorization sas{"acct", "", "sv=2025-01-05&sp=rcw&sig=abc%3D", ""};
  std::string problem;
  const auto azure = *parse_blob_endpoint("https://acct.blob.core.windows.net", problem);
  const http_request request = build_blob_request(azure, "locks", sas, s3_operation::get, "k", {});
  EXPECT_EQ(request.target, "/locks/k?sv=2025-01-05&sp=rcw&sig=abc%3D");
  EXPECT_EQ(header(request, "Host"), "acct.blob.core.windows.net");
  EXPECT_EQ(header(request, "Authorization"), "<none>");
}

TEST(AzureRequest, AnEntraIdTokenIsABearerHeaderAndNoQuery) {
  const blob_authorization bearer{"", "", "", "eyJ.token"};
  std::string problem;
  const auto azure = *parse_blob_endpoint("https://acct.blob.core.windows.net", problem);
  const http_request request =
      build_blob_request(azure, "locks", bearer, s3_operation::get, "k", {});
  EXPECT_EQ(request.target, "/locks/k");
  EXPECT_EQ(header(request, "Authorization"), "Bearer eyJ.token");
  EXPECT_EQ(header(request, "x-ms-version"), "2025-01-05");
}

TEST(AzureRequest, APutBlockNamesItsBlockEncodedAndCarriesNoConditionNorBlobHeaders) {
  blob_request_parts parts;
  parts.put = blob_put::block;
  parts.block_id = "czNs+/ZW==";
  parts.body = "abc";
  parts.body_file = "/tmp/body";
  parts.body_file_offset = 7;
  parts.body_file_size = 4;
  const http_request request =
      build_blob_request(azurite(), "locks", shared_key(), s3_operation::put_if_absent, "k", parts);
  EXPECT_EQ(request.method, "PUT");
  EXPECT_EQ(request.target, "/devstoreaccount1/locks/k?comp=block&blockid=czNs%2B%2FZW%3D%3D");
  EXPECT_EQ(header(request, "If-None-Match"), "<none>");
  EXPECT_EQ(header(request, "If-Match"), "<none>");
  EXPECT_EQ(header(request, "x-ms-blob-type"), "<none>");
  EXPECT_TRUE(header(request, "Authorization").starts_with("SharedKey devstoreaccount1:"));
  EXPECT_EQ(request.body, "abc");
  EXPECT_EQ(request.body_file, "/tmp/body");
  EXPECT_EQ(request.body_file_offset, 7u);
  EXPECT_EQ(request.body_file_size, 4u);

  // The query is signed: the same block under another ID has another signature.
  blob_request_parts other = parts;
  other.block_id = "b3RoZXI=";
  const http_request renamed =
      build_blob_request(azurite(), "locks", shared_key(), s3_operation::put_if_absent, "k", other);
  EXPECT_NE(header(renamed, "Authorization"), header(request, "Authorization"));
}

TEST(AzureRequest, APutBlockListCarriesTheConditionTheMetadataAndTheBlobsType) {
  put_condition condition = put_condition::matches("0x8DC1");
  object_metadata metadata{{"s3lect-term", "7"}};
  blob_request_parts parts;
  parts.put = blob_put::block_list;
  parts.body = "<BlockList/>";
  parts.condition = &condition;
  parts.metadata = &metadata;
  const blob_authorization sas{"acct", "", "sv=2025-01-05&sig=abc", ""};
  const http_request request =
      build_blob_request(azurite(), "locks", sas, s3_operation::put_if_match, "k", parts);
  EXPECT_EQ(request.target, "/devstoreaccount1/locks/k?comp=blocklist&sv=2025-01-05&sig=abc");
  EXPECT_EQ(header(request, "If-Match"), "\"0x8DC1\"");
  EXPECT_EQ(header(request, "x-ms-meta-s3lect_term"), "7");
  EXPECT_EQ(header(request, "x-ms-blob-content-type"), "application/json");
  EXPECT_EQ(header(request, "Content-Type"), "application/xml");
  EXPECT_EQ(header(request, "x-ms-blob-type"), "<none>");  // not a Put Blob
}

TEST(AzureRequest, AReadOfOneVersionAndARangeUseIfMatchAndXMsRange) {
  blob_request_parts parts;
  parts.read_if_match = "0x1";
  parts.range = "bytes=0-99";
  const http_request request =
      build_blob_request(azurite(), "locks", shared_key(), s3_operation::get, "k", parts);
  EXPECT_EQ(header(request, "If-Match"), "\"0x1\"");
  EXPECT_EQ(header(request, "x-ms-range"), "bytes=0-99");
}

TEST(AzureRequest, MetadataNamesMustBeIdentifiersOnceTheirDashesAreUnderscores) {
  EXPECT_EQ(blob_metadata_problem({{"s3lect-term", "7"}, {"a1", "x y"}}), "");
  EXPECT_NE(blob_metadata_problem({{"has_underscore", "1"}}), "");  // would read back as '-'
  EXPECT_NE(blob_metadata_problem({{"1abc", "1"}}), "");
  EXPECT_NE(blob_metadata_problem({{"-abc", "1"}}), "");
  EXPECT_NE(blob_metadata_problem({{"Upper", "1"}}), "");
  EXPECT_NE(blob_metadata_problem({{"", "1"}}), "");
  EXPECT_NE(blob_metadata_problem({{"a", "line\nbreak"}}), "");
  EXPECT_NE(blob_metadata_problem({{"a", " padded"}}), "");
}

TEST(AzureRequest, MetadataReadBackIsLowerCasedWithDashes) {
  const object_metadata metadata = blob_metadata_from_headers(
      {{"x-ms-meta-S3lect_Term", "7"}, {"x-ms-meta-", "ignored"}, {"x-ms-request-id", "r"}});
  ASSERT_EQ(metadata.size(), 1u);
  EXPECT_EQ(metadata.at("s3lect-term"), "7");
}

TEST(AzureRequest, EndpointsAndContainerNames) {
  std::string problem;
  const auto azure = parse_blob_endpoint("https://acct.blob.core.windows.net/", problem);
  ASSERT_TRUE(azure) << problem;
  EXPECT_EQ(azure->path_prefix, "");
  EXPECT_EQ(azure->host_header, "acct.blob.core.windows.net");
  EXPECT_EQ(blob_path(*azure, "c", "k"), "/c/k");
  EXPECT_EQ(azurite().path_prefix, "/devstoreaccount1");
  EXPECT_FALSE(parse_blob_endpoint("http://127.0.0.1:10000/a?b", problem));
  EXPECT_FALSE(parse_blob_endpoint("http://127.0.0.1:10000/a//b", problem));
  EXPECT_FALSE(parse_blob_endpoint("ftp://host", problem));
  EXPECT_EQ(container_name_problem("s3lect-test"), "");
  EXPECT_NE(container_name_problem("ab"), "");
  EXPECT_NE(container_name_problem("Upper"), "");
  EXPECT_NE(container_name_problem("a--b"), "");
  EXPECT_NE(container_name_problem("-ab"), "");
}

}  // namespace
}  // namespace s3lect::detail
