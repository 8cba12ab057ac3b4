// azure_blob_client's bodies above Put Blob's limit against Azurite: uploaded as blocks (Put
// Block) and committed by one conditional Put Block List, lowered here to a few kilobytes so
// that a body of a few hundred takes many blocks. The blob must change at the commit only, whole,
// with its metadata, and only when the condition holds; two uploads racing on one blob must
// commit exactly one body, never a mix of the two.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>

#include "support/local_azurite.hpp"
#include "support/local_s3.hpp"
#include "support/run_until_complete.hpp"
#include "support/temporary_file.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr std::uint64_t put_blob_limit = 64 * 1024;
constexpr std::uint64_t block_size = 20000;  // blocks straddle the head and the file

class AzureBlockUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string problem;
    auto found = test::local_azurite::from_environment(problem);
    ASSERT_TRUE(found) << problem;
    config = found->config();
    config.max_put_blob_bytes = put_blob_limit;
    config.block_bytes = block_size;
    key = "it/azure-blocks-" + test::unique_suffix();
  }

  std::pair<error_code, get_result> get(azure_blob_client& client) {
    return test::run_until_complete<get_result>(io, [&](auto handler) {
      client.async_get_to(
          key,
          [this](std::string_view chunk) {
            read_back.append(chunk);
            return error_code{};
          },
          "", std::move(handler));
    });
  }

  std::pair<error_code, put_result> put_file(azure_blob_client& client, const std::string& path,
                                             const put_condition& condition,
                                             object_metadata metadata) {
    return test::run_until_complete<put_result>(io, [&](auto handler) {
      client.async_put_file(key, file_body{"head:", path}, condition, std::move(metadata),
                            std::move(handler));
    });
  }

  std::pair<error_code, put_result> put(azure_blob_client& client, const std::string& body,
                                        const put_condition& condition) {
    return test::run_until_complete<put_result>(io, [&](auto handler) {
      client.async_put_with_metadata(key, body, condition, {{"s3lect-term", "9"}},
                                     std::move(handler));
    });
  }

  /// A file of `size` bytes cycling through every byte value.
  static void fill(const std::string& path, std::size_t size) {
    std::ofstream out(path, std::ios::binary);
    for (std::size_t i = 0; i < size; ++i) out.put(static_cast<char>(i % 251));
  }

  azure_blob_config config;
  std::string key;
  std::string read_back;
  asio::io_context io;
};

TEST_F(AzureBlockUpload, ABodyOverTheLimitIsCommittedWholeWithItsMetadataFromItsBlocks) {
  azure_blob_client client(io.get_executor(), config);
  test::temporary_file file("");
  constexpr std::size_t file_size = 300000;
  fill(file.path(), file_size);
  const auto [put_ec, written] =
      put_file(client, file.path(), put_condition::absent(), {{"s3lect-term", "4"}});
  ASSERT_FALSE(put_ec) << put_ec.message() << " " << written.info.message;
  EXPECT_FALSE(written.etag.empty());
  // 300,005 bytes in blocks of 20,000: 16 Put Blocks, then the Put Block List.
  EXPECT_EQ(client.stats().puts, 17u);

  const auto [get_ec, read] = get(client);
  ASSERT_FALSE(get_ec) << get_ec.message();
  ASSERT_TRUE(read.found);
  EXPECT_EQ(read.found->etag, written.etag);
  EXPECT_EQ(read.found->metadata.at("s3lect-term"), "4");
  ASSERT_EQ(read_back.size(), 5 + file_size);
  EXPECT_EQ(read_back.substr(0, 5), "head:");
  bool same = true;
  for (std::size_t i = 0; i < file_size; ++i) {
    same = same && read_back[5 + i] == static_cast<char>(i % 251);
  }
  EXPECT_TRUE(same) << "the blob is not the head and the file in order";
}

TEST_F(AzureBlockUpload, TheCommitKeepsTheConditionsOfAPutBlob) {
  azure_blob_client client(io.get_executor(), config);
  const std::string first(100000, 'a');
  const auto [create_ec, created] = put(client, first, put_condition::absent());
  ASSERT_FALSE(create_ec) << create_ec.message() << " " << created.info.message;

  // A create-only upload onto the blob loses, as a lost race, and changes nothing.
  const auto [again_ec, again] = put(client, std::string(100000, 'b'), put_condition::absent());
  EXPECT_EQ(again_ec, errc::precondition_failed) << again_ec.message() << " " << again.info.message;

  // If-Match with the current ETag wins; with the one it replaced, loses.
  const std::string second(90000, 'c');
  const auto [match_ec, matched] = put(client, second, put_condition::matches(created.etag));
  ASSERT_FALSE(match_ec) << match_ec.message() << " " << matched.info.message;
  EXPECT_NE(matched.etag, created.etag);
  const auto [stale_ec, stale] = put(client, first, put_condition::matches(created.etag));
  EXPECT_EQ(stale_ec, errc::precondition_failed) << stale_ec.message() << " " << stale.info.message;

  const auto [get_ec, read] = get(client);
  ASSERT_FALSE(get_ec) << get_ec.message();
  EXPECT_EQ(read.found->etag, matched.etag);
  EXPECT_TRUE(read_back == second) << "the blob holds " << read_back.size() << " bytes";
}

TEST_F(AzureBlockUpload, TwoUploadsRacingOnOneBlobCommitOneOfTheBodiesWhole) {
  // Both upload their blocks at once under the same If-Match; Azure keeps one set of
  // uncommitted blocks per blob, so shared block IDs would let the winner commit the loser's
  // bytes.
  azure_blob_client client(io.get_executor(), config);
  const auto [create_ec, created] = put(client, "{}", put_condition::absent());
  ASSERT_FALSE(create_ec) << create_ec.message();
  const std::string bodies[2] = {std::string(200000, 'x'), std::string(200000, 'y')};
  std::optional<std::pair<error_code, put_result>> results[2];
  for (int i = 0; i < 2; ++i) {
    client.async_put_with_metadata(key, bodies[i], put_condition::matches(created.etag), {},
                                   [&results, i](error_code ec, put_result result) {
                                     results[i].emplace(ec, std::move(result));
                                   });
  }
  io.restart();
  io.run();
  int winners = 0;
  int winner = -1;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(results[i]);
    const auto& [ec, result] = *results[i];
    if (!ec) {
      ++winners;
      winner = i;
    } else {
      EXPECT_EQ(ec, errc::precondition_failed) << ec.message() << " " << result.info.message;
    }
  }
  ASSERT_EQ(winners, 1);
  const auto [get_ec, read] = get(client);
  ASSERT_FALSE(get_ec) << get_ec.message();
  EXPECT_EQ(read.found->etag, results[winner]->second.etag);
  EXPECT_TRUE(read_back == bodies[winner]) << "the blob is not the winner's body whole";
}

TEST_F(AzureBlockUpload, AFencedFileOverTheLimitRoundTripsAndAnOlderTermIsRefused) {
  azure_blob_client client(io.get_executor(), config);
  fenced_object target(client, key);
  test::temporary_file file("");
  fill(file.path(), 150000);
  const auto [write_ec, written] = test::run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_write_file(8, file.path(), std::move(handler)); });
  ASSERT_FALSE(write_ec) << write_ec.message() << " " << written.info.message;
  const auto [older_ec, older] = test::run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_write_file(7, file.path(), std::move(handler)); });
  EXPECT_EQ(older_ec, errc::fenced_out) << older_ec.message();
  const auto [read_ec, got] = test::run_until_complete<fenced_read_result>(
      io, [&](auto handler) { target.async_read(std::move(handler)); });
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(got.found);
  EXPECT_EQ(got.found->term, 8u);
  EXPECT_EQ(got.found->body.size(), 150000u);
  EXPECT_EQ(got.found->body[150000 - 1], static_cast<char>((150000 - 1) % 251));
}

}  // namespace
}  // namespace s3lect
