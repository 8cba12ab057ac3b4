// fenced_object's streamed operations on memory_storage (the storage's default streamed
// operations): a file written with a term reads back byte for byte without the envelope, the
// fence holds for file writes, and a damaged object reaches no sink.
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/memory_storage.hpp>

#include "support/run_until_complete.hpp"
#include "support/temporary_file.hpp"

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace s3lect {
namespace {

using boost::system::error_code;
using test::run_until_complete;

class fenced_object_stream_test : public ::testing::Test {
 protected:
  std::pair<error_code, fenced_write_result> write_file(std::uint64_t term,
                                                        const std::string& path) {
    return run_until_complete<fenced_write_result>(
        io, [&](auto handler) { target.async_write_file(term, path, std::move(handler)); });
  }

  /// Reads into `streamed`.
  std::pair<error_code, fenced_read_result> read_to() {
    streamed.clear();
    body_sink sink = [this](std::string_view chunk) {
      streamed.append(chunk);
      return error_code{};
    };
    return run_until_complete<fenced_read_result>(
        io, [&](auto handler) { target.async_read_to(sink, std::move(handler)); });
  }

  boost::asio::io_context io;
  std::shared_ptr<memory_store> store = std::make_shared<memory_store>();
  memory_storage view{io.get_executor(), store};
  fenced_object target{view, "jobs/report"};
  std::string streamed;
};

TEST_F(fenced_object_stream_test, FileWrittenWithATermReadsBackWithoutTheEnvelope) {
  const std::string contents = "line one\nline two\n" + std::string(100000, 'z');
  test::temporary_file file(contents);
  const auto [ec, written] = write_file(7, file.path());
  ASSERT_FALSE(ec) << ec.message() << " " << written.info.message;
  EXPECT_EQ(written.stored_term, 7u);
  const auto raw = store->peek("jobs/report");
  ASSERT_TRUE(raw);
  EXPECT_TRUE(raw->body.starts_with("s3lect-fenced term=7 write=")) << raw->body.substr(0, 60);
  EXPECT_EQ(raw->metadata.at("s3lect-term"), "7");

  const auto [read_ec, got] = read_to();
  ASSERT_FALSE(read_ec) << read_ec.message() << " " << got.info.message;
  ASSERT_TRUE(got.found);
  EXPECT_EQ(got.found->term, 7u);
  EXPECT_EQ(got.found->etag, raw->etag);
  EXPECT_TRUE(got.found->body.empty()) << "the body went to the sink";
  EXPECT_EQ(streamed, contents);
}

TEST_F(fenced_object_stream_test, AFileWriteWithALowerTermIsFencedOut) {
  test::temporary_file higher("higher");
  test::temporary_file lower("lower");
  ASSERT_FALSE(write_file(9, higher.path()).first);
  const auto [ec, refused] = write_file(8, lower.path());
  EXPECT_EQ(ec, errc::fenced_out);
  EXPECT_EQ(refused.stored_term, 9u);
  EXPECT_EQ(refused.puts, 0);
  ASSERT_FALSE(read_to().first);
  EXPECT_EQ(streamed, "higher");
}

TEST_F(fenced_object_stream_test, AnEmptyFileIsAnEmptyBody) {
  test::temporary_file empty("");
  ASSERT_FALSE(write_file(1, empty.path()).first);
  const auto [ec, got] = read_to();
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(got.found);
  EXPECT_EQ(got.found->term, 1u);
  EXPECT_EQ(streamed, "");
}

TEST_F(fenced_object_stream_test, ADamagedEnvelopeReachesNoSink) {
  store->poke("jobs/report", "s3lect-fenced term=x write=y\nsecret payload");
  const auto [ec, got] = read_to();
  EXPECT_EQ(ec, errc::malformed_record);
  EXPECT_FALSE(got.found);
  EXPECT_EQ(streamed, "");
}

TEST_F(fenced_object_stream_test, AMissingObjectIsNotFoundAndStreamsNothing) {
  const auto [ec, got] = read_to();
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(got.found);
  EXPECT_EQ(streamed, "");
}

}  // namespace
}  // namespace s3lect
