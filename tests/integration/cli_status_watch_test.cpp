// `s3lect status --watch` against the local Ceph RADOS Gateway: a line when a leader appears and
// when it releases, exit 0 on SIGTERM, exit 4 when the store refuses us.
#include "support/cli_harness.hpp"

#include <filesystem>

namespace s3lect {
namespace {

using test::CliIntegration;
using test::eventually;
using test::lines_of;
using test::read_file;
using namespace std::chrono_literals;

class CliStatusWatch : public CliIntegration {
 protected:
  std::vector<std::string> watch_args(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"status"};
    for (auto& arg : store_args()) args.push_back(arg);
    args.insert(args.end(), {"--watch", "--interval", "100ms"});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

bool has_line(const std::string& output, const std::string& part) {
  for (const std::string& line : lines_of(output)) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST_F(CliStatusWatch, PrintsOneLinePerChangeOfWhoLeadsUntilStopped) {
  auto& text = start(watch_args({}));
  auto& json = start(watch_args({"--json"}));
  ASSERT_TRUE(eventually([&] { return has_line(text.out(), "state=none"); }, 10s)) << text.err();
  ASSERT_TRUE(eventually([&] { return has_line(json.out(), "\"state\":\"none\""); }, 10s))
      << json.err();

  const std::string marker = scratch + "/leading";
  auto leader_args = run_args("watched");
  leader_args.insert(leader_args.end(),
                     {"--", "sh", "-c", "echo $S3LECT_TERM > " + marker + "; exec sleep 60"});
  auto& leader = start(leader_args);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(marker); }, 15s)) << leader.err();
  EXPECT_TRUE(
      eventually([&] { return has_line(text.out(), "state=leading leader=watched term=1"); }, 5s))
      << text.out();
  EXPECT_TRUE(eventually(
      [&] {
        return has_line(json.out(),
                        "\"state\":\"leading\",\"leaderID\":\"watched\",\"leaderAddr\":\"\","
                        "\"term\":1}");
      },
      5s))
      << json.out();

  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s));
  EXPECT_TRUE(
      eventually([&] { return has_line(text.out(), "state=released leader=watched term=1"); }, 5s))
      << text.out();
  EXPECT_TRUE(eventually([&] { return has_line(json.out(), "\"state\":\"released\""); }, 5s))
      << json.out();
  EXPECT_EQ(lines_of(text.out()).size(), 3u) << "none, leading, released: " << text.out();

  for (auto* watcher : {&text, &json}) {
    ::kill(watcher->pid, SIGTERM);
    ASSERT_TRUE(watcher->wait(10s));
    EXPECT_EQ(watcher->status, std::optional<int>(0)) << watcher->err();
  }
}

TEST_F(CliStatusWatch, EndsWithFourWhenTheStoreRefusesUs) {
  std::vector<std::string> args{"status",     "--lock",         "s3://no-such-bucket-s3lect/k",
                                "--endpoint", s3.http_endpoint, "--path-style",
                                "--watch"};
  auto& watcher = run(args);
  EXPECT_EQ(watcher.status, std::optional<int>(4)) << watcher.err();
  EXPECT_TRUE(watcher.out().empty()) << watcher.out();
}

TEST_F(CliStatusWatch, WatchOptionsNeedWatch) {
  std::vector<std::string> args{"status"};
  for (auto& arg : store_args()) args.push_back(arg);
  args.push_back("--json");
  auto& status = run(args);
  EXPECT_EQ(status.status, std::optional<int>(2));
  EXPECT_NE(status.err().find("--json: only with --watch"), std::string::npos) << status.err();
}

}  // namespace
}  // namespace s3lect
