// s3_client's bodies of any size against a scripted loopback server: a GET over max_body_bytes
// stops at the limit and keeps the ETag (an unreadable record, not a failed read), a streamed GET
// hands every byte to its sink, a head GET is a ranged GET, and a PUT from a file streams it
// behind its head with an unsigned payload.
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "support/run_until_complete.hpp"
#include "support/scripted_http_server.hpp"
#include "support/temporary_file.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace s3lect {
namespace {

using boost::system::error_code;
using test::http_reply;
using test::recorded_request;
using test::scripted_http_server;

constexpr std::size_t reply_limit = 64 * 1024;

class S3ClientStreamTest : public ::testing::Test {
 protected:
  s3_client make_client(const scripted_http_server& server) {
    s3_config config;
    config.bucket = "bucket";
    config.endpoint = server.endpoint();
    config.region = "us-east-1";
    config.creds.access_key_id = "AKIDSTREAM";
    config.creds.secret_access_key = "stream-secret";
    config.request_timeout = std::chrono::seconds(5);
    config.max_body_bytes = reply_limit;
    return s3_client(io.get_executor(), config);
  }

  template <class Start>
  std::pair<error_code, get_result> get_with(Start start) {
    return test::run_until_complete<get_result>(io, std::move(start));
  }

  boost::asio::io_context io;
};

/// A body of `size` bytes that is not a repetition of one byte (a misplaced chunk shows).
std::string patterned_body(std::size_t size) {
  std::string body(size, '\0');
  for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return body;
}

TEST_F(S3ClientStreamTest, GetOverTheLimitStopsThereAndKeepsTheEtag) {
  const std::string body = patterned_body(4 * reply_limit);
  scripted_http_server server(
      [&](const recorded_request&) { return http_reply(200, body, {"ETag: \"big-etag\""}); });
  s3_client client = make_client(server);

  auto [ec, result] = get_with([&](auto handler) { client.async_get("lock", std::move(handler)); });

  ASSERT_FALSE(ec) << ec.message() << " " << result.info.message;
  ASSERT_TRUE(result.found);
  EXPECT_TRUE(result.found->truncated);
  EXPECT_EQ(result.found->etag, "big-etag");
  EXPECT_EQ(result.found->body, body.substr(0, reply_limit));
  EXPECT_EQ(result.info.http_status, 200u);
}

TEST_F(S3ClientStreamTest, GetWithinTheLimitIsWhole) {
  scripted_http_server server(
      [](const recorded_request&) { return http_reply(200, "{}", {"ETag: \"small\""}); });
  s3_client client = make_client(server);

  auto [ec, result] = get_with([&](auto handler) { client.async_get("lock", std::move(handler)); });

  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(result.found);
  EXPECT_FALSE(result.found->truncated);
  EXPECT_EQ(result.found->body, "{}");
}

TEST_F(S3ClientStreamTest, StreamedGetHandsEveryByteToTheSinkOnlyForThatVersion) {
  const std::string body = patterned_body(16 * reply_limit + 3);
  scripted_http_server server(
      [&](const recorded_request&) { return http_reply(200, body, {"ETag: \"v1\""}); });
  s3_client client = make_client(server);
  std::string received;
  int chunks = 0;
  body_sink sink = [&](std::string_view chunk) {
    received.append(chunk);
    ++chunks;
    return error_code{};
  };

  auto [ec, result] = get_with(
      [&](auto handler) { client.async_get_to("object", sink, "v1", std::move(handler)); });

  ASSERT_FALSE(ec) << ec.message() << " " << result.info.message;
  ASSERT_TRUE(result.found);
  EXPECT_TRUE(result.found->body.empty());
  EXPECT_EQ(result.found->etag, "v1");
  EXPECT_EQ(received, body);
  EXPECT_GT(chunks, 1);
  EXPECT_EQ(server.requests().at(0).header("If-Match"), "v1");
}

TEST_F(S3ClientStreamTest, StreamedGetStopsWithTheSinksError) {
  scripted_http_server server([](const recorded_request&) {
    return http_reply(200, std::string(8 * reply_limit, 'x'), {"ETag: \"v1\""});
  });
  s3_client client = make_client(server);
  body_sink refuse = [](std::string_view) {
    return make_error_code(boost::system::errc::broken_pipe);
  };

  auto [ec, result] = get_with(
      [&](auto handler) { client.async_get_to("object", refuse, "", std::move(handler)); });

  EXPECT_EQ(ec, boost::system::errc::broken_pipe) << ec.message();
  EXPECT_EQ(server.requests().at(0).header("If-Match"), "");
}

TEST_F(S3ClientStreamTest, StreamedGetOfAChangedVersionIsPreconditionFailed) {
  scripted_http_server server(
      [](const recorded_request&) { return test::s3_error_reply(412, "PreconditionFailed"); });
  s3_client client = make_client(server);
  body_sink ignore = [](std::string_view) { return error_code{}; };

  auto [ec, result] = get_with(
      [&](auto handler) { client.async_get_to("object", ignore, "old", std::move(handler)); });

  EXPECT_EQ(ec, errc::precondition_failed) << ec.message();
  EXPECT_FALSE(result.found);
}

TEST_F(S3ClientStreamTest, HeadGetIsRangedAndTellsFromContentRangeThatThereIsMore) {
  scripted_http_server server([](const recorded_request&) {
    return http_reply(206, "0123456789", {"ETag: \"e\"", "Content-Range: bytes 0-9/5000000"});
  });
  s3_client client = make_client(server);

  auto [ec, result] =
      get_with([&](auto handler) { client.async_get_head("object", 10, std::move(handler)); });

  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.found->body, "0123456789");
  EXPECT_TRUE(result.found->truncated);
  EXPECT_EQ(server.requests().at(0).header("Range"), "bytes=0-9");
}

TEST_F(S3ClientStreamTest, HeadGetOfAnEmptyObjectFallsBackToAPlainGet) {
  scripted_http_server server([](const recorded_request& request) {
    if (!request.header("Range").empty()) return test::s3_error_reply(416, "InvalidRange");
    return http_reply(200, "", {"ETag: \"empty\""});
  });
  s3_client client = make_client(server);

  auto [ec, result] =
      get_with([&](auto handler) { client.async_get_head("object", 10, std::move(handler)); });

  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.found->etag, "empty");
  EXPECT_FALSE(result.found->truncated);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(S3ClientStreamTest, PutFileStreamsHeadThenFileUnsigned) {
  const std::string contents = patterned_body(5 * reply_limit + 11);
  test::temporary_file file(contents);
  scripted_http_server server(
      [](const recorded_request&) { return http_reply(200, "", {"ETag: \"put\""}); });
  s3_client client = make_client(server);
  object_metadata metadata{{"s3lect-term", "3"}};

  auto [ec, result] = test::run_until_complete<put_result>(io, [&](auto handler) {
    client.async_put_file("object", file_body{"head\n", file.path()}, put_condition::absent(),
                          metadata, std::move(handler));
  });

  ASSERT_FALSE(ec) << ec.message() << " " << result.info.message;
  EXPECT_EQ(result.etag, "put");
  const recorded_request sent = server.requests().at(0);
  EXPECT_EQ(sent.body, "head\n" + contents);
  EXPECT_EQ(sent.header("x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  EXPECT_EQ(sent.header("x-amz-meta-s3lect-term"), "3");
  EXPECT_EQ(sent.header("If-None-Match"), "*");
}

TEST_F(S3ClientStreamTest, PutFileOfADirectoryFailsWithoutARequest) {
  scripted_http_server server(
      [](const recorded_request&) { return http_reply(200, "", {"ETag: \"put\""}); });
  s3_client client = make_client(server);

  auto [ec, result] = test::run_until_complete<put_result>(io, [&](auto handler) {
    client.async_put_file("object", file_body{"", "/"}, put_condition::absent(), {},
                          std::move(handler));
  });

  EXPECT_EQ(ec, boost::asio::error::invalid_argument);
  EXPECT_NE(result.info.message.find("not a regular file"), std::string::npos)
      << result.info.message;
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace s3lect
