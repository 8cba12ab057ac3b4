// fenced_object on the local Ceph RADOS Gateway: user metadata round-trips, a term-5 writer
// paused between its read and its PUT is refused once term 6 wrote, and writers of terms 5 and 6
// racing on two threads never get a term-5 write accepted after a term-6 write completed.
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/s3_client.hpp>

#include "support/local_s3_test.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

class FencedObjectIntegration : public test::local_s3_test {
 protected:
  void SetUp() override {
    local_s3_test::SetUp();
    if (HasFatalFailure()) return;
    key = "fenced/" + test::unique_suffix();
  }

  static std::pair<error_code, fenced_write_result> write(asio::io_context& io,
                                                          fenced_object& target, std::uint64_t term,
                                                          std::string body) {
    return test::run_until_complete<fenced_write_result>(
        io, [&](auto handler) { target.async_write(term, std::move(body), std::move(handler)); });
  }

  std::string key;
  asio::io_context io;
};

TEST_F(FencedObjectIntegration, TermTravelsAsUserMetadataAndReadStripsTheEnvelope) {
  s3_client client(io.get_executor(), s3.config(false));
  fenced_object target(client, key);
  const auto [ec, written] = write(io, target, 5, "payload");
  ASSERT_FALSE(ec) << ec.message() << " " << written.info.message;
  const auto [get_ec, raw] = test::run_until_complete<get_result>(
      io, [&](auto handler) { client.async_get(key, std::move(handler)); });
  ASSERT_FALSE(get_ec);
  ASSERT_TRUE(raw.found);
  EXPECT_EQ(raw.found->metadata.at("s3lect-term"), "5");
  const auto [read_ec, got] = test::run_until_complete<fenced_read_result>(
      io, [&](auto handler) { target.async_read(std::move(handler)); });
  ASSERT_FALSE(read_ec);
  EXPECT_EQ(got.found->body, "payload");
  EXPECT_EQ(got.found->term, 5u);
  EXPECT_EQ(got.found->etag, written.etag);
}

TEST_F(FencedObjectIntegration, PausedTermFiveWriterIsRefusedOnceTermSixWrote) {
  s3_client client5(io.get_executor(), s3.config(false));
  fenced_object writer5(client5, key);
  ASSERT_FALSE(write(io, writer5, 5, "same body").first);

  asio::io_context io6;
  s3_client client6(io6.get_executor(), s3.config(false));
  fenced_object writer6(client6, key);
  int updates = 0;
  fenced_update paused = [&](const std::optional<fenced_version>&) {
    if (++updates == 1) {
      const auto [ec, done] = write(io6, writer6, 6, "same body");
      EXPECT_FALSE(ec) << ec.message();
    }
    return std::string("same body");
  };
  const auto [ec, result] = test::run_until_complete<fenced_write_result>(
      io, [&](auto handler) { writer5.async_update(5, paused, std::move(handler)); });
  EXPECT_EQ(ec, errc::fenced_out) << ec.message();
  EXPECT_EQ(result.stored_term, 6u);
  EXPECT_EQ(result.puts, 1);  // the one PUT with the stale ETag, refused by RGW
  for (int attempt = 0; attempt < 3; ++attempt) {
    EXPECT_EQ(write(io, writer5, 5, "again").first, errc::fenced_out);
  }
}

struct write_record {
  std::uint64_t term;
  steady::time_point started;
  steady::time_point completed;
  bool accepted;
};

// Two threads, each with its own client, write as fast as they can with terms 5 and 6. Term 6
// starts once term 5 has had a few writes accepted, so the two really interleave. Term 5 writes on
// until term 6 is done and one of its own writes started after term 6's first write completed
// (at most 200 more): on a loaded machine one slow term-5 write can span all of term 6's.
TEST_F(FencedObjectIntegration, InterleavedWritersNeverGetAStaleWriteAcceptedAfterTheNewerOne) {
  std::mutex mutex;
  std::vector<write_record> records;
  std::atomic<int> term5_accepted{0};
  std::atomic<bool> term6_done{false};
  std::atomic<steady::rep> term6_first_completed{0};  // 0: not yet
  std::atomic<bool> term5_wrote_after_term6{false};
  const auto term5_goes_on = [&](int i) {
    return !term6_done || (!term5_wrote_after_term6 && i < 200);
  };
  auto writer = [&](std::uint64_t term, int writes) {
    asio::io_context writer_io;
    s3_client client(writer_io.get_executor(), s3.config(false));
    fenced_object target(client, key);
    for (int i = 0; i < writes || (term == 5 && term5_goes_on(i)); ++i) {
      const auto started = steady::now();
      const auto [ec, result] = write(writer_io, target, term, "w" + std::to_string(i));
      const auto completed = steady::now();
      ASSERT_TRUE(!ec || ec == errc::fenced_out) << ec.message() << " " << result.info.message;
      if (!ec && term == 5) ++term5_accepted;
      steady::rep unset = 0;
      if (!ec && term == 6) {
        term6_first_completed.compare_exchange_strong(unset, completed.time_since_epoch().count());
      }
      const steady::rep first6 = term6_first_completed;
      if (term == 5 && first6 != 0 && started.time_since_epoch().count() > first6) {
        term5_wrote_after_term6 = true;
      }
      const std::lock_guard lock(mutex);
      records.push_back({term, started, completed, !ec});
    }
  };
  std::thread five(writer, 5, 10);
  while (term5_accepted < 3) std::this_thread::yield();
  std::thread six(writer, 6, 10);
  six.join();
  term6_done = true;
  five.join();

  std::optional<steady::time_point> first_term6_completion;
  for (const auto& record : records) {
    if (record.term == 6 && record.accepted &&
        (!first_term6_completion || record.completed < *first_term6_completion)) {
      first_term6_completion = record.completed;
    }
  }
  ASSERT_TRUE(first_term6_completion);
  int refused_after = 0;
  for (const auto& record : records) {
    if (record.term != 5 || record.started <= *first_term6_completion) continue;
    EXPECT_FALSE(record.accepted) << "a term-5 write started after term 6 wrote was accepted";
    ++refused_after;
  }
  EXPECT_GT(refused_after, 0);
}

}  // namespace
}  // namespace s3lect
