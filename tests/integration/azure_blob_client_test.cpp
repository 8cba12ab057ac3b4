// azure_blob_client against Azurite, Microsoft's Azure Storage emulator: conditional-write races
// (a lost create is 409 BlobAlreadyExists there), If-Match, metadata with Azure's naming rules,
// missing blobs and containers, a refused key, ranged and streamed reads, a 20 MB file, fenced
// writes, and a configuration taken from AZURE_STORAGE_CONNECTION_STRING alone.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/store_error.hpp>

#include "support/local_azurite.hpp"
#include "support/local_s3.hpp"
#include "support/run_until_complete.hpp"
#include "support/temporary_file.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

class AzureBlobClientIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string problem;
    auto found = test::local_azurite::from_environment(problem);
    ASSERT_TRUE(found) << problem;
    azurite = std::move(*found);
    key = "it/azure-" + test::unique_suffix();
  }

  std::pair<error_code, get_result> get(storage& client, const std::string& name) {
    return test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(name, std::move(handler)); });
  }
  std::pair<error_code, put_result> put(storage& client, const std::string& name,
                                        const std::string& body, const put_condition& condition,
                                        object_metadata metadata = {}) {
    return test::run_until_complete<put_result>(io, [&](auto handler) {
      client.async_put_with_metadata(name, body, condition, std::move(metadata),
                                     std::move(handler));
    });
  }
  std::pair<error_code, response_info> remove(azure_blob_client& client, const std::string& name) {
    return test::run_until_complete<response_info>(
        io, [&](auto handler) { client.async_delete(name, std::move(handler)); });
  }

  test::local_azurite azurite;
  std::string key;
  asio::io_context io;
};

TEST_F(AzureBlobClientIntegration, ConcurrentCreatesHaveExactlyOneWinnerAndTheLosersLoseCleanly) {
  constexpr int writers = 20;
  std::vector<std::unique_ptr<azure_blob_client>> clients;
  std::vector<std::string> bodies;
  for (int i = 0; i < writers; ++i) {
    clients.push_back(std::make_unique<azure_blob_client>(io.get_executor(), azurite.config()));
    bodies.push_back(R"({"leaderID":"writer-)" + std::to_string(i) + R"("})");
  }
  std::vector<std::optional<std::pair<error_code, put_result>>> results(writers);
  for (int i = 0; i < writers; ++i) {
    clients[i]->async_put(key, bodies[i], put_condition::absent(),
                          [&results, i](error_code ec, put_result result) {
                            results[i].emplace(ec, std::move(result));
                          });
  }
  io.restart();
  io.run();
  azure_blob_client reader(io.get_executor(), azurite.config());
  auto [read_ec, current] = get(reader, key);
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(current.found);
  int winners = 0;
  for (int i = 0; i < writers; ++i) {
    ASSERT_TRUE(results[i]);
    const auto& [ec, result] = *results[i];
    if (!ec) {
      ++winners;
      EXPECT_EQ(current.found->body, bodies[i]);
      EXPECT_EQ(current.found->etag, result.etag);
    } else {
      // 409 BlobAlreadyExists, read as the lost race it is.
      EXPECT_EQ(ec, errc::precondition_failed) << ec.message() << " " << result.info.message;
      EXPECT_EQ(result.info.error_code, "BlobAlreadyExists");
      EXPECT_FALSE(result.info.request_id.empty());
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_FALSE(remove(reader, key).first);
}

TEST_F(AzureBlobClientIntegration, IfMatchWinsOnlyWithTheCurrentEtag) {
  azure_blob_client client(io.get_executor(), azurite.config());
  auto [create_ec, created] = put(client, key, "v1", put_condition::absent());
  ASSERT_FALSE(create_ec) << create_ec.message() << " " << created.info.message;
  EXPECT_FALSE(created.etag.empty());
  EXPECT_EQ(created.etag.find('"'), std::string::npos);  // normalised
  auto [update_ec, updated] = put(client, key, "v2", put_condition::matches(created.etag));
  ASSERT_FALSE(update_ec) << update_ec.message();
  EXPECT_NE(updated.etag, created.etag);
  auto [stale_ec, stale] = put(client, key, "v3", put_condition::matches(created.etag));
  EXPECT_EQ(stale_ec, errc::precondition_failed);
  EXPECT_EQ(stale.info.error_code, "ConditionNotMet");
  auto [get_ec, current] = get(client, key);
  ASSERT_FALSE(get_ec);
  EXPECT_EQ(current.found->body, "v2");
  EXPECT_EQ(current.found->etag, updated.etag);
  // Dated by the store's clock: rule (c) of the expiry works on Azure unchanged.
  EXPECT_TRUE(current.found->last_modified.has_value());
  EXPECT_TRUE(current.info.server_date.has_value());
}

TEST_F(AzureBlobClientIntegration, IfMatchOnAMissingBlobFailsAndCreatesNothing) {
  // The client never sends `If-Match: *`, which Azurite (#2589) lets create a missing blob.
  azure_blob_client client(io.get_executor(), azurite.config());
  auto [ec, result] = put(client, key, "x", put_condition::matches("0x8DC0000000000000"));
  EXPECT_EQ(ec, errc::precondition_failed) << ec.message();
  auto [get_ec, current] = get(client, key);
  ASSERT_FALSE(get_ec);
  EXPECT_FALSE(current.found);
}

TEST_F(AzureBlobClientIntegration, AnIfMatchOfStarOrOfAListIsRefusedBeforeAnythingIsSent) {
  // `If-Match: "*"` would reach Azurite as `*`, which creates a missing blob (#2589).
  azure_blob_client client(io.get_executor(), azurite.config());
  for (const char* etag : {"*", "\"0x1\",\"0x2\"", "0x1,0x2"}) {
    auto [ec, result] = put(client, key, "x", put_condition::matches(etag));
    EXPECT_EQ(ec, asio::error::invalid_argument) << etag;
    EXPECT_EQ(result.info.http_status, 0u) << etag;
  }
  EXPECT_FALSE(get(client, key).second.found);
}

TEST_F(AzureBlobClientIntegration, MetadataRoundTripsAndAnOverwriteReplacesIt) {
  azure_blob_client client(io.get_executor(), azurite.config());
  auto [ec, created] =
      put(client, key, "{}", put_condition::absent(), {{"s3lect-term", "7"}, {"owner", "node a"}});
  ASSERT_FALSE(ec) << ec.message() << " " << created.info.message;
  auto [get_ec, read] = get(client, key);
  ASSERT_FALSE(get_ec);
  EXPECT_EQ(read.found->metadata, (object_metadata{{"owner", "node a"}, {"s3lect-term", "7"}}));
  auto [update_ec, updated] =
      put(client, key, "{}", put_condition::matches(created.etag), {{"s3lect-term", "8"}});
  ASSERT_FALSE(update_ec);
  EXPECT_EQ(get(client, key).second.found->metadata, (object_metadata{{"s3lect-term", "8"}}));
  // A name that could not round-trip is refused before anything is sent.
  auto [bad_ec, bad] =
      put(client, key, "{}", put_condition::matches(updated.etag), {{"has_underscore", "1"}});
  EXPECT_EQ(bad_ec, asio::error::invalid_argument);
  EXPECT_NE(bad.info.message.find("has_underscore"), std::string::npos);
  EXPECT_EQ(get(client, key).second.found->etag, updated.etag);
}

TEST_F(AzureBlobClientIntegration, AMissingBlobIsNoObjectAndItsDeleteSucceeds) {
  azure_blob_client client(io.get_executor(), azurite.config());
  auto [ec, result] = get(client, key);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(result.found);
  EXPECT_EQ(result.info.http_status, 404u);
  EXPECT_FALSE(remove(client, key).first);
}

TEST_F(AzureBlobClientIntegration, AMissingContainerIsNoSuchBucketAndTheDefaultTokenThrowsIt) {
  azure_blob_config config = azurite.config();
  config.container = "no-such-container-" + test::unique_suffix().substr(0, 16);
  azure_blob_client client(io.get_executor(), config);
  auto [ec, result] = get(client, key);
  EXPECT_EQ(ec, errc::no_such_bucket);
  EXPECT_EQ(result.info.error_code, "ContainerNotFound");
  auto [put_ec, put_result] = put(client, key, "x", put_condition::absent());
  EXPECT_EQ(put_ec, errc::no_such_bucket);

  std::exception_ptr thrown;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { co_await client.async_get(key); },
      [&](std::exception_ptr e) { thrown = e; });
  io.restart();
  io.run();
  ASSERT_TRUE(thrown);
  try {
    std::rethrow_exception(thrown);
  } catch (const store_error& e) {
    EXPECT_EQ(e.code(), errc::no_such_bucket);
    EXPECT_EQ(e.info().error_code, "ContainerNotFound");
    EXPECT_NE(std::string(e.what()).find("ContainerNotFound"), std::string::npos) << e.what();
  }
}

TEST_F(AzureBlobClientIntegration,
       AWrongKeyIsRefusedWithTheServersMessageAndNeverRetriedAsMissing) {
  azure_blob_config config = azurite.config();
  config.account_key = "d3Jvbmcga2V5IHdyb25nIGtleSB3cm9uZyBrZXk=";
  azure_blob_client client(io.get_executor(), config);
  auto [ec, result] = get(client, key);
  // Azurite says AuthorizationFailure where Azure says AuthenticationFailed (signature_mismatch).
  EXPECT_TRUE(ec == errc::access_denied || ec == errc::signature_mismatch) << ec.message();
  EXPECT_FALSE(is_transient(ec));
  EXPECT_EQ(result.info.http_status, 403u);
  EXPECT_NE(result.info.message.find("authenticate"), std::string::npos) << result.info.message;
  EXPECT_EQ(result.info.message.find("RequestId"), std::string::npos) << result.info.message;
}

TEST_F(AzureBlobClientIntegration, AHeadReadStopsAtItsLimitAndAnEmptyBlobIsReadWhole) {
  azure_blob_client client(io.get_executor(), azurite.config());
  ASSERT_FALSE(put(client, key, "0123456789", put_condition::absent()).first);
  auto [ec, head] = test::run_until_complete<get_result>(
      io, [&](auto handler) { client.async_get_head(key, 4, std::move(handler)); });
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(head.found->body, "0123");
  EXPECT_TRUE(head.found->truncated);
  auto [all_ec, all] = test::run_until_complete<get_result>(
      io, [&](auto handler) { client.async_get_head(key, 10, std::move(handler)); });
  ASSERT_FALSE(all_ec);
  EXPECT_EQ(all.found->body, "0123456789");
  EXPECT_FALSE(all.found->truncated);
  const std::string empty_key = key + "-empty";
  ASSERT_FALSE(put(client, empty_key, "", put_condition::absent()).first);
  auto [empty_ec, empty] = test::run_until_complete<get_result>(
      io, [&](auto handler) { client.async_get_head(empty_key, 4, std::move(handler)); });
  ASSERT_FALSE(empty_ec) << empty_ec.message();  // 416 InvalidRange, then a whole read
  EXPECT_EQ(empty.found->body, "");
  EXPECT_FALSE(empty.found->truncated);
}

TEST_F(AzureBlobClientIntegration, A20MegabyteFileRoundTripsWithOnlyTheConnectionString) {
  // As a user would configure it: AZURE_STORAGE_CONNECTION_STRING and nothing else.
  ::setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection_string.c_str(), 1);
  azure_blob_config config = azure_blob_config::from_environment(azurite.container);
  ::unsetenv("AZURE_STORAGE_CONNECTION_STRING");
  azure_blob_client client(io.get_executor(), config);
  test::temporary_file file("");
  std::string pattern;
  for (int i = 0; i < 256; ++i) pattern += static_cast<char>(i);
  {
    std::ofstream out(file.path(), std::ios::binary);
    for (int i = 0; i < 20 * 1024 * 1024 / 256; ++i) out << pattern;
  }
  auto [put_ec, written] = test::run_until_complete<put_result>(io, [&](auto handler) {
    client.async_put_file(key, file_body{"head:", file.path()}, put_condition::absent(),
                          {{"s3lect-term", "3"}}, std::move(handler));
  });
  ASSERT_FALSE(put_ec) << put_ec.message() << " " << written.info.message;
  const std::string written_etag = written.etag;  // a lambda may not capture a binding (clang 14)
  std::size_t received = 0;
  bool same = true;
  auto [get_ec, read] = test::run_until_complete<get_result>(io, [&](auto handler) {
    client.async_get_to(
        key,
        [&](std::string_view chunk) {
          for (const char c : chunk) {
            const std::size_t at = received++;
            const char expected = at < 5 ? "head:"[at] : pattern[(at - 5) % 256];
            same = same && c == expected;
          }
          return error_code{};
        },
        written_etag, std::move(handler));
  });
  ASSERT_FALSE(get_ec) << get_ec.message() << " " << read.info.message;
  EXPECT_EQ(received, 5u + 20u * 1024 * 1024);
  EXPECT_TRUE(same);
  EXPECT_EQ(read.found->metadata.at("s3lect-term"), "3");
}

TEST_F(AzureBlobClientIntegration, AFencedWriteOfAnOlderTermIsRefused) {
  azure_blob_client client(io.get_executor(), azurite.config());
  fenced_object target(client, key);
  const auto write = [&](std::uint64_t term, std::string body) {
    return test::run_until_complete<fenced_write_result>(
        io, [&](auto handler) { target.async_write(term, std::move(body), std::move(handler)); });
  };
  auto [six_ec, six] = write(6, "term six");
  ASSERT_FALSE(six_ec) << six_ec.message() << " " << six.info.message;
  auto [five_ec, five] = write(5, "term five");
  EXPECT_EQ(five_ec, errc::fenced_out) << five_ec.message();
  const auto [read_ec, got] = test::run_until_complete<fenced_read_result>(
      io, [&](auto handler) { target.async_read(std::move(handler)); });
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(got.found);
  EXPECT_EQ(got.found->body, "term six");
  EXPECT_EQ(got.found->term, 6u);
}

}  // namespace
}  // namespace s3lect
