// fenced_object on memory_storage: the fence (a lower term never overwrites a higher one), the
// envelope that keeps ETags unique, and the faults after which a write must re-read instead of
// re-sending (412, 409, an unknown outcome, Ceph's 500 for a lost race).
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/memory_storage.hpp>

#include "support/run_until_complete.hpp"
#include "fence_envelope.hpp"
#include "metadata_headers.hpp"

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using s3lect::errc;
using s3lect::fenced_object;
using s3lect::fenced_read_result;
using s3lect::fenced_version;
using s3lect::fenced_write_result;
using s3lect::memory_faults;
using s3lect::memory_storage;
using s3lect::memory_store;
using s3lect::test::run_until_complete;

std::pair<error_code, fenced_write_result> write(asio::io_context& io, fenced_object& target,
                                                 std::uint64_t term, std::string body) {
  return run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_write(term, std::move(body), std::move(handler)); });
}

std::pair<error_code, fenced_write_result> append(asio::io_context& io, fenced_object& target,
                                                  std::uint64_t term, std::string line) {
  s3lect::fenced_update add_line = [line](const std::optional<fenced_version>& current) {
    return (current ? current->body : std::string()) + line;
  };
  return run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_update(term, add_line, std::move(handler)); });
}

std::pair<error_code, fenced_read_result> read(asio::io_context& io, fenced_object& target) {
  return run_until_complete<fenced_read_result>(
      io, [&](auto handler) { target.async_read(std::move(handler)); });
}

class fenced_object_test : public ::testing::Test {
 protected:
  asio::io_context io;
  std::shared_ptr<memory_store> store = std::make_shared<memory_store>();
  memory_storage view{io.get_executor(), store};
  fenced_object target{view, "jobs/output"};
  // Another node's writer of the same object, run to completion from inside an update of
  // `target`'s (a write that lands between that update's read and its PUT).
  asio::io_context other_io;
  memory_storage other_view{other_io.get_executor(), store};
  fenced_object other{other_view, "jobs/output"};
};

TEST_F(fenced_object_test, FirstWriteStoresBodyAndTermAndReadReturnsThem) {
  const auto [ec, written] = write(io, target, 5, "hello");
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(written.stored_term, 5u);
  EXPECT_EQ(written.reads, 1);
  EXPECT_EQ(written.puts, 1);
  const auto raw = store->peek("jobs/output");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->metadata.at("s3lect-term"), "5");
  EXPECT_EQ(raw->etag, written.etag);

  const auto [read_ec, got] = read(io, target);
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(got.found);
  EXPECT_EQ(got.found->body, "hello");
  EXPECT_EQ(got.found->term, 5u);
  EXPECT_EQ(got.found->etag, written.etag);
}

TEST_F(fenced_object_test, LowerTermIsFencedOutAndWritesNothing) {
  ASSERT_FALSE(write(io, target, 6, "from six").first);
  const auto before = store->stats();
  const auto [ec, refused] = write(io, target, 5, "from five");
  EXPECT_EQ(ec, errc::fenced_out);
  EXPECT_EQ(refused.stored_term, 6u);
  EXPECT_EQ(refused.puts, 0);
  EXPECT_EQ(store->stats().puts, before.puts);
  EXPECT_EQ(read(io, target).second.found->body, "from six");
}

TEST_F(fenced_object_test, EqualAndHigherTermsMayWrite) {
  ASSERT_FALSE(write(io, target, 5, "a").first);
  ASSERT_FALSE(write(io, target, 5, "b").first);
  ASSERT_FALSE(write(io, target, 7, "c").first);
  const auto got = read(io, target).second;
  EXPECT_EQ(got.found->body, "c");
  EXPECT_EQ(got.found->term, 7u);
}

// S3's ETag is the MD5 of the bytes: without the envelope, a term-6 write of the body a term-5
// writer read would leave the ETag that writer holds, and its If-Match would succeed.
TEST_F(fenced_object_test, IdenticalBodiesStillGetDistinctETags) {
  const auto first = write(io, target, 5, "same").second;
  const auto second = write(io, target, 6, "same").second;
  EXPECT_NE(first.etag, second.etag);
}

// A term-5 writer pauses between its read and its PUT; meanwhile a term-6 write completes
// (through another node's view, on another executor). The term-5 PUT must then be refused and,
// after its re-read, fenced out, even though it writes the very body the object already had.
TEST_F(fenced_object_test, WriterPausedBetweenReadAndPutIsFencedOutAfterHigherTermWrote) {
  ASSERT_FALSE(write(io, target, 5, "v1").first);
  int updates = 0;
  s3lect::fenced_update paused = [&](const std::optional<fenced_version>&) {
    if (++updates == 1) {
      const auto [ec, done] = write(other_io, other, 6, "v1");
      EXPECT_FALSE(ec) << ec.message();
    }
    return std::string("v1");
  };
  const auto [ec, result] = run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_update(5, paused, std::move(handler)); });
  EXPECT_EQ(ec, errc::fenced_out);
  EXPECT_EQ(result.stored_term, 6u);
  EXPECT_EQ(result.puts, 1);
  EXPECT_EQ(read(io, target).second.found->term, 6u);
}

TEST_F(fenced_object_test, ConflictRereadsAndAppliesTheUpdateToWhatItFinds) {
  ASSERT_FALSE(append(io, target, 5, "a").first);
  memory_faults faults;
  faults.conflict_next = 1;
  view.set_faults(faults);
  const auto [ec, result] = append(io, target, 5, "b");
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.reads, 2);
  EXPECT_EQ(result.puts, 2);
  EXPECT_EQ(read(io, target).second.found->body, "ab");
}

// The PUT committed but its answer was a 500: re-sending would append twice. The re-read finds
// the write's own id and reports success without a second PUT.
TEST_F(fenced_object_test, UnknownOutcomeThatCommittedIsNotWrittenTwice) {
  ASSERT_FALSE(append(io, target, 5, "a").first);
  memory_faults faults;
  faults.commit_then_fail_next = 1;
  view.set_faults(faults);
  const auto [ec, result] = append(io, target, 5, "b");
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.puts, 1);
  EXPECT_EQ(result.reads, 2);
  EXPECT_EQ(read(io, target).second.found->body, "ab");
}

TEST_F(fenced_object_test, RaceLostWithCephStyle500RereadsAndIsFencedOut) {
  ASSERT_FALSE(write(io, target, 5, "v1").first);
  memory_faults faults;
  faults.race_losers_get_500 = true;
  view.set_faults(faults);
  int updates = 0;
  s3lect::fenced_update racing = [&](const std::optional<fenced_version>&) {
    if (++updates == 1) {
      EXPECT_FALSE(write(other_io, other, 6, "v6").first);
    }
    return std::string("v5");
  };
  const auto [ec, result] = run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_update(5, racing, std::move(handler)); });
  EXPECT_EQ(ec, errc::fenced_out);
  EXPECT_EQ(read(io, target).second.found->body, "v6");
}

TEST_F(fenced_object_test, PreconditionFailureFromSameTermRereadsAndKeepsBothAppends) {
  ASSERT_FALSE(append(io, target, 5, "a").first);
  int updates = 0;
  s3lect::fenced_update racing = [&](const std::optional<fenced_version>& current) {
    if (++updates == 1) {
      EXPECT_FALSE(append(other_io, other, 5, "b").first);
    }
    return current->body + "c";
  };
  const auto [ec, result] = run_until_complete<fenced_write_result>(
      io, [&](auto handler) { target.async_update(5, racing, std::move(handler)); });
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.puts, 2);
  EXPECT_EQ(read(io, target).second.found->body, "abc");
}

TEST_F(fenced_object_test, TransientGetFailuresAreRetriedUnderThePolicy) {
  memory_faults faults;
  faults.fail_next = 1;
  faults.fail_with = errc::connection_lost;
  view.set_faults(faults);
  const auto [ec, result] = write(io, target, 5, "x");
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.reads, 2);
}

TEST_F(fenced_object_test, GivesUpWithConflictAfterMaxDecisions) {
  s3lect::fenced_object_config config;
  config.max_decisions = 2;
  fenced_object patient_twice{view, "jobs/output", config};
  memory_faults faults;
  faults.conflict_next = 5;
  view.set_faults(faults);
  const auto [ec, result] = write(io, patient_twice, 5, "x");
  EXPECT_EQ(ec, errc::conflict);
  EXPECT_EQ(result.puts, 2);
}

TEST_F(fenced_object_test, MetadataContradictingTheEnvelopeIsMalformed) {
  s3lect::object_metadata lying{{"s3lect-term", "9"}};
  store->put("jobs/output", s3lect::detail::wrap_fenced_body(3, "id", "x"),
             s3lect::put_condition::absent(), lying);
  EXPECT_EQ(read(io, target).first, errc::malformed_record);
  EXPECT_EQ(write(io, target, 5, "y").first, errc::malformed_record);
}

TEST_F(fenced_object_test, PlainOverwriteOfAFencedObjectIsRefusedNotTakenAsTermZero) {
  s3lect::object_metadata term{{"s3lect-term", "9"}};
  store->put("jobs/output", "plain", s3lect::put_condition::absent(), term);
  EXPECT_EQ(write(io, target, 5, "y").first, errc::malformed_record);
}

TEST_F(fenced_object_test, ObjectWithoutFencingIsTermZeroAndMayBeOverwritten) {
  store->poke("jobs/output", "legacy");
  const auto got = read(io, target).second;
  EXPECT_EQ(got.found->body, "legacy");
  EXPECT_EQ(got.found->term, 0u);
  ASSERT_FALSE(write(io, target, 1, "fenced").first);
}

TEST(fenced_object_config_test, RejectsAnEmptyKeyAndNoDecisions) {
  asio::io_context io;
  memory_storage view{io.get_executor(), std::make_shared<memory_store>()};
  EXPECT_THROW(fenced_object(view, ""), boost::system::system_error);
  s3lect::fenced_object_config config;
  config.max_decisions = 0;
  EXPECT_THROW(fenced_object(view, "k", config), boost::system::system_error);
}

TEST(fence_envelope_test, RoundTripsAndRejectsGarbage) {
  s3lect::object stored;
  stored.body = s3lect::detail::wrap_fenced_body(42, "abc", "line1\nline2");
  std::string problem;
  const auto parsed = s3lect::detail::unwrap_fenced_object(stored, problem);
  ASSERT_TRUE(parsed) << problem;
  EXPECT_EQ(parsed->version.term, 42u);
  EXPECT_EQ(parsed->write_id, "abc");
  EXPECT_EQ(parsed->version.body, "line1\nline2");
  for (const char* garbage : {"s3lect-fenced term=x write=a\n", "s3lect-fenced term=4\n",
                              "s3lect-fenced term=4 write=\n", "s3lect-fenced term=4 write=a"}) {
    stored.body = garbage;
    EXPECT_FALSE(s3lect::detail::unwrap_fenced_object(stored, problem)) << garbage;
  }
}

TEST(metadata_headers_test, ReadsPrefixedHeadersCaseInsensitivelyAndRefusesBadNames) {
  const std::vector<std::pair<std::string, std::string>> headers{
      {"X-Amz-Meta-S3lect-Term", "7"}, {"ETag", "\"x\""}, {"x-amz-meta-", "empty"}};
  const auto metadata = s3lect::detail::metadata_from_headers(headers);
  ASSERT_EQ(metadata.size(), 1u);
  EXPECT_EQ(metadata.at("s3lect-term"), "7");
  EXPECT_FALSE(s3lect::detail::metadata_problem({{"Upper", "v"}}).empty());
  EXPECT_FALSE(s3lect::detail::metadata_problem({{"ok", "line\r\nInjected: 1"}}).empty());
  EXPECT_TRUE(s3lect::detail::metadata_problem({{"s3lect-term", "12"}}).empty());
}

namespace metadata_less {

// A storage written before user metadata existed: only get_impl and put_impl.
class plain_storage final : public s3lect::storage {
 public:
  explicit plain_storage(memory_storage& inner) : inner_(inner) {}
  executor_type get_executor() const override { return inner_.get_executor(); }

 protected:
  void get_impl(std::string key,
                asio::any_completion_handler<s3lect::get_signature> handler) override {
    inner_.async_get(std::move(key), std::move(handler));
  }
  void put_impl(std::string key, std::string body, s3lect::put_condition condition,
                asio::any_completion_handler<s3lect::put_signature> handler) override {
    inner_.async_put(std::move(key), std::move(body), std::move(condition), std::move(handler));
  }

 private:
  memory_storage& inner_;
};

TEST(StorageWithoutMetadata, RefusesMetadataClearlyAndServesPlainPuts) {
  asio::io_context io;
  auto store = std::make_shared<memory_store>();
  memory_storage inner(io.get_executor(), store);
  plain_storage plain(inner);
  const auto [plain_ec, plain_put] = run_until_complete<s3lect::put_result>(io, [&](auto handler) {
    plain.async_put_with_metadata("k", "body", s3lect::put_condition::absent(), {},
                                  std::move(handler));
  });
  EXPECT_FALSE(plain_ec) << plain_ec.message();
  fenced_object target(plain, "fenced");
  const auto [ec, result] = write(io, target, 5, "x");
  EXPECT_EQ(ec, errc::bad_request);
  EXPECT_NE(result.info.message.find("metadata"), std::string::npos) << result.info.message;
  EXPECT_FALSE(store->peek("fenced"));
}

}  // namespace metadata_less

}  // namespace
