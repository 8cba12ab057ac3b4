// `s3lect status --watch` following a real `s3lect run --peer --peer-watch` leader with
// zero-configuration TLS, against the local Ceph RADOS Gateway: the leader holds the watch's
// request, a release is reported from its endpoint ("source":"peer") rather than found by the
// next S3 poll, and when the leader is killed the watch falls back to reading S3.
#include "support/cli_harness.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <cstdlib>

namespace s3lect {
namespace {

using test::CliIntegration;
using test::eventually;
using test::lines_of;
using namespace std::chrono_literals;

// Fixed loopback ports of this test: health endpoints and metrics listeners of two leaders.
constexpr unsigned short first_peer_port = 25101, first_metrics_port = 25111;
constexpr unsigned short second_peer_port = 25102, second_metrics_port = 25112;

class CliStatusFollow : public CliIntegration {
 protected:
  /// A leader in peer mode with watches and a self-signed certificate (its pin in the record).
  std::vector<std::string> peer_leader(const std::string& id, unsigned short peer_port,
                                       unsigned short metrics_port) const {
    auto args = run_args(id);
    args.insert(args.end(), {"--peer", "--peer-watch", "--peer-listen",
                             "127.0.0.1:" + std::to_string(peer_port), "--metrics-listen",
                             "127.0.0.1:" + std::to_string(metrics_port), "--", "sleep", "60"});
    return args;
  }
};

/// Watches the health server of the node whose metrics listen on `metrics_port` holds now, as
/// its /metrics says; -1 when it does not answer.
int held_watches(unsigned short metrics_port) {
  boost::asio::ip::tcp::iostream stream;
  stream.expires_after(5s);
  stream.connect("127.0.0.1", std::to_string(metrics_port));
  if (!stream) return -1;
  stream << "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" << std::flush;
  for (std::string line; std::getline(stream, line);) {
    if (line.rfind("s3lect_server_watches{", 0) == 0 &&
        line.find("server=\"health\"") != std::string::npos) {
      return std::atoi(line.substr(line.rfind(' ') + 1).c_str());
    }
  }
  return -1;
}

bool has_line(const std::string& output, const std::string& part) {
  for (const std::string& line : lines_of(output)) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST_F(CliStatusFollow, FollowsTheLeadersEndpointAndFallsBackToS3WhenItDies) {
  std::vector<std::string> watch_args{"status"};
  for (auto& arg : store_args()) watch_args.push_back(arg);
  // S3 is read every 3 s when not following; lines learned from S3 say "source":"s3".
  watch_args.insert(watch_args.end(), {"--watch", "--json", "--interval", "3s"});
  auto& watcher = start(watch_args);
  const auto prints = [&](const std::string& part) {
    return eventually([&] { return has_line(watcher.out(), part); }, 15s);
  };
  ASSERT_TRUE(prints("\"source\":\"s3\",\"state\":\"none\"")) << watcher.err();

  // A leader found by polling S3, whose endpoint the watch then follows: the leader holds its
  // request (nobody else watches it).
  const auto lead_and_be_followed = [&](const std::string& id, unsigned short peer_port,
                                        unsigned short metrics_port) -> test::cli_process& {
    auto& leader = start(peer_leader(id, peer_port, metrics_port));
    EXPECT_TRUE(prints("\"source\":\"s3\",\"state\":\"leading\",\"leaderID\":\"" + id +
                       "\",\"leaderAddr\":\"127.0.0.1:" + std::to_string(peer_port) + "\""))
        << watcher.out() << leader.err();
    EXPECT_TRUE(eventually([&] { return held_watches(metrics_port) == 1; }, 10s)) << watcher.err();
    return leader;
  };

  // The release is what the leader's endpoint reports; no S3 poll in between finds it.
  auto& first = lead_and_be_followed("first", first_peer_port, first_metrics_port);
  ASSERT_FALSE(HasFailure());
  ::kill(first.pid, SIGTERM);
  ASSERT_TRUE(first.wait(10s));
  EXPECT_TRUE(prints("\"source\":\"peer\",\"state\":\"released\",\"leaderID\":\"first\""))
      << watcher.out();

  // A crashed leader (s3lect and its guardian) releases nothing: the watch falls back to S3 and
  // sees its lease run out.
  auto& second = lead_and_be_followed("second", second_peer_port, second_metrics_port);
  ASSERT_FALSE(HasFailure());
  crash_node(second);
  ASSERT_TRUE(second.wait(10s));
  EXPECT_TRUE(prints("\"source\":\"s3\",\"state\":\"expired\",\"leaderID\":\"second\""))
      << watcher.out();
  EXPECT_NE(watcher.err().find("cannot follow the leader's endpoint at 127.0.0.1:25102"),
            std::string::npos)
      << watcher.err();
  EXPECT_EQ(lines_of(watcher.out()).size(), 5u)
      << "none, leading, released, leading, expired: " << watcher.out();

  ::kill(watcher.pid, SIGTERM);
  ASSERT_TRUE(watcher.wait(10s));
  EXPECT_EQ(watcher.status, std::optional<int>(0)) << watcher.err();
}

TEST_F(CliStatusFollow, ASuccessorIsPrintedSoonAfterTheFollowedLeaderEnds) {
  // Ports of its own: CTest runs the tests of this file at the same time as each other.
  constexpr unsigned short leader_peer_port = 25104, leader_metrics_port = 25114;
  constexpr unsigned short successor_peer_port = 25103, successor_metrics_port = 25113;
  std::vector<std::string> watch_args{"status"};
  for (auto& arg : store_args()) watch_args.push_back(arg);
  watch_args.insert(watch_args.end(), {"--watch", "--json", "--interval", "3s"});
  auto& watcher = start(watch_args);
  const auto prints_within = [&](const std::string& part, std::chrono::milliseconds limit) {
    return eventually([&] { return has_line(watcher.out(), part); }, limit);
  };
  auto& first = start(peer_leader("first", leader_peer_port, leader_metrics_port));
  ASSERT_TRUE(prints_within("\"state\":\"leading\",\"leaderID\":\"first\"", 15s))
      << watcher.out() << first.err();
  ASSERT_TRUE(eventually([&] { return held_watches(leader_metrics_port) >= 1; }, 10s));
  auto& successor = start(peer_leader("successor", successor_peer_port, successor_metrics_port));
  // The successor follows the first leader's endpoint too, and takes over as soon as it ends.
  ASSERT_TRUE(eventually([&] { return held_watches(leader_metrics_port) == 2; }, 10s))
      << successor.err();

  ::kill(first.pid, SIGTERM);
  ASSERT_TRUE(first.wait(10s));
  // Well within the 3 s --interval: the watch does not wait a whole interval after the
  // leader's endpoint said its leadership ended.
  EXPECT_TRUE(prints_within("\"state\":\"leading\",\"leaderID\":\"successor\"", 1500ms))
      << watcher.out() << successor.err();
}

TEST_F(CliStatusFollow, PeerCaIsOnlyForWatchesAndMustBeReadable) {
  std::vector<std::string> args{"status"};
  for (auto& arg : store_args()) args.push_back(arg);
  args.insert(args.end(), {"--peer-ca", scratch + "/missing.pem"});
  test::expect_one_line_error(run(args), 2, "s3lect status: --peer-ca: only with --watch");
  args.push_back("--watch");
  test::expect_one_line_error(
      run(args), 2, "s3lect status: --peer-ca: cannot load '" + scratch + "/missing.pem'");
}

}  // namespace
}  // namespace s3lect
