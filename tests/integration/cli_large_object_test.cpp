// Objects larger than the 1 MiB reply limit against the local RGW: a 20 MB fenced object
// round-trips through `put` and `get` byte for byte and keeps its fence, `put --file` takes
// regular files only, and a 20 MB lock object is an unreadable record (status exits 7, `run`
// takes it over after one lease) rather than a store failure.
#include "support/cli_harness.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace s3lect::test {
namespace {

constexpr std::size_t twenty_megabytes = 20 * 1000 * 1000;

/// Bytes that are not one byte repeated, so that a lost or doubled chunk shows.
std::string varied_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  std::uint32_t state = 12345;
  for (char& byte : bytes) {
    state = state * 1103515245u + 12345u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

class CliLargeObjectIntegration : public CliIntegration {
 protected:
  /// The 20 MB objects go at once: the local radosgw keeps its objects in memory (1 GiB).
  void TearDown() override {
    boost::asio::io_context io;
    s3_client client(io.get_executor(), s3.config(false));
    for (const std::string& object_key : {key, key + ".large"}) {
      run_until_complete<response_info>(
          io, [&](auto handler) { client.async_delete(object_key, std::move(handler)); });
    }
    CliIntegration::TearDown();
  }

  /// `args`, then the store options and the data object of this test.
  std::vector<std::string> on_object(std::vector<std::string> args) const {
    args.insert(args.end(), {"--endpoint", s3.http_endpoint, "--path-style",
                             "s3://" + s3.bucket + "/" + key + ".large"});
    return args;
  }

  std::string write_scratch(const std::string& name, const std::string& bytes) const {
    const std::string path = scratch + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  /// `command` with this test's --lock and store options.
  std::vector<std::string> on_lock(const std::string& command) const {
    std::vector<std::string> args{command};
    for (auto& arg : store_args()) args.push_back(arg);
    return args;
  }
};

TEST_F(CliLargeObjectIntegration, TwentyMegabyteFencedObjectRoundTripsAndKeepsItsFence) {
  const std::string body = varied_bytes(twenty_megabytes);
  const std::string path = write_scratch("big", body);
  const auto& written = run(on_object({"put", "--term", "5", "--file", path}));
  ASSERT_EQ(written.status, std::optional<int>(0)) << written.err();

  const auto& got = run(on_object({"get"}));
  ASSERT_EQ(got.status, std::optional<int>(0)) << got.err();
  EXPECT_EQ(got.err(), "term 5\n");
  EXPECT_TRUE(got.out() == body) << "read back " << got.out().size() << " bytes, wrote "
                                 << body.size();

  expect_one_line_error(run(on_object({"put", "--term", "4", "--file", write_scratch("s", "x")})),
                        10, "fenced out");
  const auto& after = run(on_object({"get"}));
  EXPECT_EQ(after.status, std::optional<int>(0)) << after.err();
  EXPECT_TRUE(after.out() == body) << "the lower term changed the object";
  const auto& rewritten = run(on_object({"put", "--term", "5", "--file", path}));
  EXPECT_EQ(rewritten.status, std::optional<int>(0)) << rewritten.err();
}

TEST_F(CliLargeObjectIntegration, PutOfADirectoryExitsTwoAndWritesNothing) {
  expect_one_line_error(run(on_object({"put", "--term", "1", "--file", scratch})), 2,
                        "is a directory");
  expect_one_line_error(run(on_object({"get"})), 3, "no object");
}

TEST_F(CliLargeObjectIntegration, TwentyMegabyteLockObjectIsAnUnreadableRecord) {
  put_raw(key, varied_bytes(twenty_megabytes));
  auto& process = status();
  expect_one_line_error(process, 7, "the read stopped there");
  EXPECT_NE(process.out().find("\"etag\":\""), std::string::npos) << process.out().substr(0, 300);
  expect_one_line_error(run(on_lock("release")), 7, "refusing to overwrite");
}

TEST_F(CliLargeObjectIntegration, RunTakesATwentyMegabyteLockObjectOverAfterOneLease) {
  put_raw(key, varied_bytes(twenty_megabytes));
  // Each read of the record takes its first MiB, which under TSan on a loaded machine took
  // longer than run_args()'s 150 ms request timeout: the timings of a 3 s lease instead, with
  // 400 ms per attempt (3 x 400 ms + 250 ms of retry delays fit in D - F = 1.5 s). The takeover
  // must still wait out one whole lease.
  std::vector<std::string> args{"run"};
  for (auto& arg : store_args()) args.push_back(arg);
  for (const char* arg :
       {"--lease",      "3s",    "--renew-deadline",  "2s",    "--frequent",     "500ms",
        "--infrequent", "1s",    "--request-timeout", "400ms", "--retry-delays", "50ms,200ms",
        "--kill-grace", "500ms", "--log-level",       "debug", "--id",           "over-large",
        "--",           "true"}) {
    args.push_back(arg);
  }
  const auto started = std::chrono::steady_clock::now();
  auto& process = run(args);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(process.status, std::optional<int>(0)) << process.err();
  EXPECT_NE(process.err().find("unreadable lock record"), std::string::npos) << process.err();
  EXPECT_NE(process.err().find("msg=\"became leader\""), std::string::npos) << process.err();
  EXPECT_GE(took, std::chrono::seconds(3)) << "took over before the 3 s lease had passed";
  auto& after = status();
  EXPECT_EQ(after.status, std::optional<int>(0)) << after.err();
  EXPECT_NE(after.out().find("\"leaderID\":\"over-large\""), std::string::npos) << after.out();
}

}  // namespace
}  // namespace s3lect::test
