// The job guardian against what an unlucky operator or a hostile job does to it
// (docs/safety-and-fencing.md#what-can-still-keep-a-job-past-its-lease): a stop of s3lect's
// whole process group, a job that stops its own guardian, a job that looks for the guardian's
// descriptors, and the credentials in the guardian's environment.
#include "support/cli_harness.hpp"

#include "support/job_tree.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using test::CliIntegration;
using test::eventually;
using test::guardians_of;
using test::job_marker;
using test::job_tree_command;
using test::processes_with;
using test::read_file;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// The isolations this system allows a job, as the guardian's probe reports them.
std::vector<std::string> isolations_here() {
  const auto guardian = std::filesystem::path(test::cli_path()).parent_path() / "s3lect-guardian";
  const std::string probe = "/tmp/s3lect-probe-" + job_marker();
  std::vector<std::string> levels{"guardian"};
  if (std::system((guardian.string() + " --probe > " + probe).c_str()) != 0) return levels;
  const std::string found = read_file(probe);
  std::filesystem::remove(probe);
  const bool pid_namespace = found.find("pid-namespace ok") != std::string::npos;
  const bool cgroup = found.find("cgroup ok") != std::string::npos;
  if (pid_namespace) levels.emplace_back("pid-namespace");
  if (cgroup) levels.emplace_back("cgroup");
  if (pid_namespace && cgroup) levels.emplace_back("pid-namespace,cgroup");
  return levels;
}

/// The isolations in which the command is the guardian's own child, so that it can name its
/// guardian as its parent.
std::vector<std::string> isolations_without_pid_namespace() {
  std::vector<std::string> levels;
  for (const auto& level : isolations_here()) {
    if (level.find("pid-namespace") == std::string::npos) levels.push_back(level);
  }
  return levels;
}

std::chrono::milliseconds since(steady::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
}

TEST_F(CliIntegration, AStopOfS3lectsProcessGroupLeavesTheGuardianToEndTheJobAtItsDeadline) {
  for (const auto& isolation : isolations_here()) {
    SCOPED_TRACE("--isolation " + isolation);
    const std::string marker = job_marker();
    auto args = run_args("grouped");
    args.insert(args.end(), {"--isolation", isolation, "--", "sh", "-c", job_tree_command(marker)});
    auto& leader = start(args);  // its own process group, as a shell's job or a service's
    ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }, 15s)) << leader.err();
    const auto guardians = guardians_of(leader.pid);
    ASSERT_EQ(guardians.size(), 1U);
    EXPECT_EQ(::getsid(guardians[0]), guardians[0]) << "the guardian leads no session of its own";
    EXPECT_NE(::getpgid(guardians[0]), leader.pid);

    const auto stopped = steady::now();
    ASSERT_EQ(::kill(-leader.pid, SIGSTOP), 0);  // a shell's `kill -STOP %1`
    // The guardian, not in the group, ends the tree at the renew deadline of the last renewal
    // (at most D = 1.2 s after the stop) and the grace (0.5 s): before any follower may take
    // over (L = 2 s after that renewal).
    EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 4s))
        << "the job outlived its leadership while s3lect's process group was stopped";
    EXPECT_LT(since(stopped), 2000ms);
    ::kill(-leader.pid, SIGCONT);
    ::kill(leader.pid, SIGTERM);
    ASSERT_TRUE(leader.wait(10s)) << leader.err();
  }
}

TEST_F(CliIntegration, AJobThatStopsItsGuardianIsStillGoneWithinTheGraceAndAMarginOfASigterm) {
  for (const auto& isolation : isolations_without_pid_namespace()) {
    SCOPED_TRACE("--isolation " + isolation);
    const std::string marker = job_marker();
    auto args = run_args("attacker");
    // Every process ignores SIGTERM, so only a SIGKILL after the grace ends them; the command
    // stops its guardian (its parent) again and again.
    args.insert(args.end(), {"--isolation", isolation, "--", "sh", "-c",
                             "trap '' TERM; sleep 600." + marker + "1 & (setsid sleep 600." +
                                 marker + "2 &); while :; do kill -STOP $PPID; sleep 0.05; done"});
    auto& leader = start(args);
    ASSERT_TRUE(eventually([&] { return processes_with(marker) == 2; }, 15s)) << leader.err();
    const auto signalled = steady::now();
    ::kill(leader.pid, SIGTERM);
    EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 5s)) << leader.err();
    EXPECT_LT(since(signalled), 2000ms) << "kill grace 500 ms + 1.5 s";
    ASSERT_TRUE(leader.wait(10s)) << leader.err();
    EXPECT_EQ(leader.status, std::optional<int>(0)) << leader.err();
    EXPECT_NE(status().out().find("\"released\":true"), std::string::npos);
  }
}

TEST_F(CliIntegration, TheGuardiansEnvironmentHoldsNoCredentialWhileTheJobKeepsItsEnvironment) {
  const std::string marker = job_marker();
  const std::string job_env = scratch + "/job.env";
  auto args = run_args("secretive");
  args.insert(args.end(),
              {"--", "sh", "-c", "env > " + job_env + "; exec sleep 600." + marker + "3"});
  auto& leader = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 1; }, 15s)) << leader.err();
  const std::string secret = "AWS_SECRET_ACCESS_KEY=" + s3.secret_key;
  EXPECT_NE(read_file(job_env).find(secret), std::string::npos)
      << "the job lost the environment it was given";
  const auto guardians = guardians_of(leader.pid);
  ASSERT_EQ(guardians.size(), 1U);
  const std::string environ_path = "/proc/" + std::to_string(guardians[0]) + "/environ";
  EXPECT_EQ(read_file(environ_path).find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
  EXPECT_EQ(read_file(environ_path).find("S3LECT_TERM"), std::string::npos);
  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s)) << leader.err();
}

TEST_F(CliIntegration, InAPidNamespaceTheJobFindsNoDescriptorOfTheGuardiansToTake) {
  const auto levels = isolations_here();
  if (std::find(levels.begin(), levels.end(), "pid-namespace") == levels.end()) {
    GTEST_SKIP() << "no PID namespace on this system";
  }
  // Built beside this test binary's directory, in the chaos harness's (tests/chaos/).
  const auto thief = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "chaos" /
                     "s3lect_channel_thief";
  ASSERT_EQ(::access(thief.c_str(), X_OK), 0) << thief << " is missing: build it";
  const std::string marker = job_marker();
  const std::string taken = scratch + "/taken";
  auto args = run_args("robbed");
  // PID 1 is the namespace's init, forked from the guardian: what it inherited, the job could
  // take from it (pidfd_getfd), and with the control socket it could tell s3lect that it ended.
  args.insert(args.end(),
              {"--isolation", "pid-namespace", "--", "sh", "-c",
               thief.string() + " --forge 1 > " + taken + "; exec sleep 600." + marker + "3"});
  auto& leader = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 1; }, 15s)) << leader.err();
  EXPECT_NE(read_file(taken).find("result taken=0 "), std::string::npos) << read_file(taken);
  // Nothing was forged: s3lect still leads and its job runs.
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(processes_with(marker), 1);
  EXPECT_EQ(leader.err().find("msg=\"command exited\""), std::string::npos) << leader.err();
  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s)) << leader.err();
}

}  // namespace
}  // namespace s3lect
