// `s3lect run`'s promise is about the job, not the s3lect process: no process of the command's
// tree (children, setsid daemons) outlives the leadership, whatever happens to s3lect.
#include "support/cli_harness.hpp"

#include "support/job_tree.hpp"
#include "support/tcp_forwarder.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <sstream>
#include <string>

namespace s3lect {
namespace {

using test::CliIntegration;
using test::eventually;
using test::job_marker;
using test::job_tree_command;
using test::json_number;
using test::processes_with;
using test::read_file;
using namespace std::chrono_literals;

TEST_F(CliIntegration, WhenS3lectIsKilledItsGuardianKillsTheTreeAndReleasesForAFollower) {
  const std::string marker = job_marker();
  auto leader_args = run_args("killed");
  leader_args.insert(leader_args.end(), {"--", "sh", "-c", job_tree_command(marker)});
  auto& leader = start(leader_args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }, 15s)) << leader.err();
  const auto term = json_number(status().out(), "term");
  ASSERT_TRUE(term);
  const std::string follower_term = scratch + "/follower-term";
  auto follower_args = run_args("follower");
  follower_args.insert(follower_args.end(),
                       {"--", "sh", "-c", "echo $S3LECT_TERM > " + follower_term + "; sleep 60"});
  auto& follower = start(follower_args);
  ASSERT_TRUE(eventually(
      [&] {
        return follower.err().find("msg=\"leader changed\" holder=killed") != std::string::npos;
      },
      10s))
      << follower.err();

  ::kill(leader.pid, SIGKILL);  // s3lect alone: its guardian and job live on.
  ASSERT_TRUE(leader.wait(10s));
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 2s))
      << "processes of the job outlived s3lect";
  EXPECT_TRUE(eventually(
      [&] {
        return leader.err().find("msg=\"lock released for s3lect, which is gone") !=
               std::string::npos;
      },
      5s))
      << leader.err();
  // The follower takes over from the released record, with the next term.
  ASSERT_TRUE(eventually([&] { return !read_file(follower_term).empty(); }, 10s)) << follower.err();
  long long taken = 0;
  std::istringstream(read_file(follower_term)) >> taken;
  EXPECT_EQ(taken, *term + 1);
  ::kill(follower.pid, SIGTERM);
  ASSERT_TRUE(follower.wait(10s));
}

TEST_F(CliIntegration, AKilledS3lectWithTheDefaultIdIsReleasedToo) {
  // The default id, HOSTNAME:PID, names s3lect's PID, not the PID of the release its guardian
  // runs: the release must compare the record with s3lect's id.
  auto args = run_args("unused");
  args.resize(args.size() - 2);  // Without --id.
  const std::string marker = job_marker();
  args.insert(args.end(), {"--", "sh", "-c", job_tree_command(marker)});
  auto& leader = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }, 15s)) << leader.err();
  ::kill(leader.pid, SIGKILL);
  ASSERT_TRUE(leader.wait(10s));
  EXPECT_TRUE(
      eventually([&] { return status().out().find("\"released\":true") != std::string::npos; }, 5s))
      << leader.err();
  EXPECT_EQ(processes_with(marker), 0);
}

TEST_F(CliIntegration, AJobThatDaemonizesIsKilledWithTheRestWhenLeadershipIsLost) {
  const std::string marker = job_marker();
  const auto port_at = s3.http_endpoint.rfind(':');
  test::tcp_forwarder cable(
      "127.0.0.1", static_cast<std::uint16_t>(std::stoi(s3.http_endpoint.substr(port_at + 1))));
  auto args = run_args("cut-off", "http://127.0.0.1:" + std::to_string(cable.port()));
  args.insert(args.end(), {"--", "sh", "-c", job_tree_command(marker)});
  auto& leader = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }, 15s)) << leader.err();
  cable.stop();  // No renewal can succeed: the leadership ends at the renew deadline.
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 10s))
      << "the setsid daemon or the background child outlived the leadership: " << leader.err();
  // At the deadline the guardian stops the tree ("leadership not confirmed in time"), and the
  // elector demotes itself at the renew deadline. s3lect reports whichever of the two reaches
  // it first: "lost leadership" (the elector's loss), or "the guardian stopped the command"
  // (the guardian's report; seen on a loaded TSan run). Either may come after the tree is gone:
  // wait for the line, not only for the tree.
  EXPECT_TRUE(eventually(
      [&] {
        const std::string err = leader.err();
        return err.find("msg=\"lost leadership\"") != std::string::npos ||
               err.find(
                   "msg=\"the guardian stopped the command: the leadership was not "
                   "confirmed in time\"") != std::string::npos;
      },
      5s))
      << leader.err();
  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s));
}

TEST_F(CliIntegration, WhatTheCommandLeavesBehindIsKilledWhenItExits) {
  const std::string marker = job_marker();
  auto args = run_args("exits");
  args.insert(args.end(), {"--", "sh", "-c",
                           "sleep 600." + marker + "1 & (setsid sleep 600." + marker +
                               "2 &); sleep 0.3; exit 3"});
  auto& node = run(args);
  EXPECT_EQ(node.status, std::optional<int>(3)) << node.err();
  EXPECT_EQ(processes_with(marker), 0) << "leftovers outlived the command";
  EXPECT_NE(node.err().find("leftovers_killed=2"), std::string::npos) << node.err();
  EXPECT_NE(status().out().find("\"released\":true"), std::string::npos);
}

TEST_F(CliIntegration, ASecondStopSignalKillsACommandThatIgnoresTheFirst) {
  const std::string marker = job_marker();
  auto args = run_args("stubborn");
  args.insert(args.end(),
              {"--", "sh", "-c",
               "trap '' TERM; sleep 600." + marker + "1 & exec sleep 600." + marker + "3"});
  auto& node = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 2; }, 15s)) << node.err();
  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(eventually(
      [&] { return node.err().find("msg=\"stopping command\"") != std::string::npos; }, 5s));
  ::kill(node.pid, SIGTERM);  // Within the 500 ms grace.
  ASSERT_TRUE(node.wait(10s));
  EXPECT_EQ(node.status, std::optional<int>(0)) << node.err();
  EXPECT_NE(node.err().find("reason=second_stop_signal"), std::string::npos) << node.err();
  EXPECT_EQ(processes_with(marker), 0);
  EXPECT_NE(status().out().find("\"released\":true"), std::string::npos);
}

TEST_F(CliIntegration, IsolationIsCheckedAtStartUpAndLogged) {
  auto bad = run_args("bad-isolation");
  bad.insert(bad.end(), {"--isolation", "vm", "--", "true"});
  test::expect_one_line_error(run(bad), 2, "--isolation: expected auto");
  // What the system allows is what a job gets by default, and it says which.
  auto args = run_args("isolated");
  args.insert(args.end(), {"--", "true"});
  auto& node = run(args);
  EXPECT_EQ(node.status, std::optional<int>(0)) << node.err();
  EXPECT_NE(node.err().find("msg=\"command started\""), std::string::npos) << node.err();
  EXPECT_NE(node.err().find(" isolation="), std::string::npos) << node.err();
}

}  // namespace
}  // namespace s3lect
