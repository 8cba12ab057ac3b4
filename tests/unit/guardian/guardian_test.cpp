// The job guardian as a process: it owns the command's whole tree, ends it when s3lect is gone
// or its deadline passes, and obeys s3lect's stop, kill and signals. Real processes, no store.
#include "support/guardian_under_test.hpp"
#include "support/job_tree.hpp"

#include "base/platform.hpp"
#include "guardian/descriptors.hpp"
#include "guardian/job_launch.hpp"
#include "guardian/process_table.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace {

using namespace std::chrono_literals;
using s3lect::detail::linux_facilities;
using s3lect::test::group_tree_command;
using s3lect::test::guardian_setup;
using s3lect::test::guardian_under_test;
using s3lect::test::job_marker;
using s3lect::test::job_tree_command;
using s3lect::test::kill_processes_with;
using s3lect::test::processes_with;
namespace guardian = s3lect::guardian;

/// Polls `condition` every 5 ms for up to `limit`: the conditions are about real processes
/// (the guardian and its job), which have no event to await here.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 5s) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < give_up) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);  // Real processes take real time.
  }
  return condition();
}

/// A job tree the guardian keeps whole here: with its subreaper and the /proc process table
/// (Linux), one with a setsid daemon; else (S3LECT_PORTABLE_FALLBACKS, other systems) one that
/// stays in the command's process group, which is all the guardian finds there.
std::string keepable_tree(const std::string& marker) {
  return linux_facilities ? job_tree_command(marker) : group_tree_command(marker);
}
constexpr std::size_t keepable_tree_size = linux_facilities ? 3 : 2;

/// Whether the job's processes are all gone once the guardian reported its end: at once with
/// the subreaper, which reaps every one itself; without it, orphans are init's to reap, soon.
bool tree_gone(const std::string& marker) {
  if (linux_facilities) return processes_with(marker) == 0;
  return eventually([&] { return processes_with(marker) == 0; }, 2s);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// What this system allows, as the guardian's own probe finds it when run as `user` (-1: this
/// process's user). A user without privileges needs a user namespace for a PID namespace, which
/// a multithreaded process cannot enter: under TSan, whose runtime starts its thread again in
/// every forked child, root may have PID namespaces and nobody not.
std::string probe(int user = -1) {
  std::string command = s3lect::test::guardian_path() + " --probe";
  if (user >= 0) {
    const std::string id = std::to_string(user);
    command = "setpriv --reuid=" + id + " --regid=" + id + " --clear-groups " + command;
  }
  std::string output;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, pipe)) output += line;
    ::pclose(pipe);
  }
  return output;
}

bool allowed(const std::string& isolation, int user = -1) {
  return probe(user).find(isolation + " ok") != std::string::npos;
}

class Guardian : public ::testing::Test {
 protected:
  void TearDown() override { kill_processes_with(marker); }
  const std::string marker = job_marker();
  const std::string scratch = ::testing::TempDir();
};

TEST_F(Guardian, KillsTheWholeTreeAtOnceWhenS3lectIsGone) {
  guardian_under_test guard({{"sh", "-c", keepable_tree(marker)}});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == keepable_tree_size; }));
  guard.close_control();
  // The background child and the setsid daemon too, not only the command.
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 2s));
  EXPECT_EQ(guard.wait_exit(), std::optional<int>(0));  // No release was asked for.
}

TEST_F(Guardian, StopsTheTreeAtItsDeadlineOnlyOnceTheLatestHasPassed) {
  guardian_under_test guard({{"sh", "-c", keepable_tree(marker)}, "guardian", 300ms});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  // A renewal confirmed while the first deadline was still ahead moves the deadline.
  const std::int64_t later = guardian::boot_now_ns() + 900'000'000;
  guard.send(guardian::lead_until{later, 7, "fedcba9876543210"});
  const auto ended = guard.expect<guardian::job_ended>();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->cause, guardian::end_cause::deadline);
  EXPECT_GE(guardian::boot_now_ns(), later) << "stopped at the first deadline, not the latest";
  EXPECT_TRUE(tree_gone(marker));
  guard.send(guardian::farewell{});
  EXPECT_EQ(guard.wait_exit(), std::optional<int>(0));
}

TEST_F(Guardian, StopSendsTermThenKillsWhatIgnoresItAfterTheGrace) {
  guardian_under_test guard(
      {{"sh", "-c", "trap '' TERM; sleep 600." + marker + "1 & exec sleep 600." + marker + "3"},
       "guardian",
       30s,
       200ms});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 2; }));
  const auto asked = std::chrono::steady_clock::now();
  guard.send(guardian::stop_job{200});
  const auto ended = guard.expect<guardian::job_ended>();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->cause, guardian::end_cause::killed);
  EXPECT_EQ(ended->status, 128 + SIGKILL);
  EXPECT_GE(std::chrono::steady_clock::now() - asked, 200ms) << "killed before the grace ended";
  EXPECT_TRUE(tree_gone(marker));
}

TEST_F(Guardian, AStopTheCommandHonoursEndsAsStopped) {
  guardian_under_test guard({{"sh", "-c", keepable_tree(marker)}});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == keepable_tree_size; }));
  guard.send(guardian::stop_job{5000});
  const auto ended = guard.expect<guardian::job_ended>(4s);  // Well within the grace.
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->cause, guardian::end_cause::stopped);
  EXPECT_EQ(ended->status, 128 + SIGTERM);
  EXPECT_TRUE(tree_gone(marker));
}

TEST_F(Guardian, WhatTheCommandLeavesBehindIsKilledWhenItExits) {
  // Without the subreaper and /proc: the background child, in the command's group, but the
  // setsid daemon escapes and nothing is counted.
  const std::string daemon = linux_facilities ? "(setsid sleep 600." + marker + "2 &); " : "";
  guardian_under_test guard(
      {{"sh", "-c", "sleep 600." + marker + "1 & " + daemon + "sleep 0.2; exit 3"}});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  const auto ended = guard.expect<guardian::job_ended>();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->cause, guardian::end_cause::exited);
  EXPECT_EQ(ended->status, 3);
  EXPECT_EQ(ended->leftovers, linux_facilities ? 2u : 0u);
  EXPECT_TRUE(tree_gone(marker));
}

TEST_F(Guardian, PassesSignalsToTheCommandsGroup) {
  const std::string ready = scratch + "guardian-ready-" + marker;
  const std::string got = scratch + "guardian-got-" + marker;
  guardian_under_test guard({{"sh", "-c",
                              "trap 'echo usr1 > " + got + "; exit 0' USR1; touch " + ready +
                                  "; while :; do sleep 0.02; done"}});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(ready); }));
  guard.send(guardian::forward_signal{SIGUSR1});
  const auto ended = guard.expect<guardian::job_ended>();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->status, 0);
  EXPECT_EQ(slurp(got), "usr1\n");
  std::filesystem::remove(ready);
  std::filesystem::remove(got);
}

TEST_F(Guardian, ReportsACommandThatCannotBeExecuted) {
  guardian_under_test guard({{"/nonexistent/command-" + marker}});
  const auto failed = guard.expect<guardian::job_failed>();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->error, ENOENT);
  EXPECT_EQ(failed->step, "exec");
  EXPECT_EQ(guard.wait_exit(), std::optional<int>(1));
}

TEST_F(Guardian, StartsNothingPastItsFirstDeadline) {
  guardian_under_test guard({{"sh", "-c", keepable_tree(marker)}, "guardian", -1ms});
  const auto failed = guard.expect<guardian::job_failed>();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->step, "deadline");
  EXPECT_TRUE(tree_gone(marker));
}

TEST_F(Guardian, IgnoresInterruptsAndStopsMeantForS3lectsProcessGroup) {
  guardian_under_test guard({{"sh", "-c", keepable_tree(marker)}});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGQUIT}) {
    ::kill(guard.pid, signal);
  }
  // Still running, not stopped, and still obeying.
  guard.send(guardian::kill_job{});
  const auto ended = guard.expect<guardian::job_ended>(2s);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->cause, guardian::end_cause::killed);
  EXPECT_TRUE(tree_gone(marker));
}

TEST_F(Guardian, InItsOwnPidNamespaceTheJobSeesItsOwnPidsAndDiesWithTheGuardian) {
  if (!allowed("pid-namespace")) GTEST_SKIP() << "no PID namespace here: " << probe();
  const std::string pids = scratch + "guardian-pids-" + marker;
  guardian_under_test guard(
      {{"sh", "-c",
        "echo $$ $(ls /proc | grep -c '^[0-9]') > " + pids + "; " + job_tree_command(marker)},
       "pid-namespace"});
  const auto started = guard.expect<guardian::job_started>();
  ASSERT_TRUE(started);
  EXPECT_EQ(started->isolation, "pid-namespace");
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }));
  int own_pid = 0, visible = 0;
  std::istringstream(slurp(pids)) >> own_pid >> visible;
  // The init's first child: PID 2 of the namespace (3 under TSan, whose thread in the init
  // takes a PID too), not the PID the machine knows it by.
  EXPECT_GE(own_pid, 2);
  EXPECT_LE(own_pid, 3);
  EXPECT_NE(own_pid, started->pid);
  // init, sh, and the subshell, ls and grep counting: a handful, not the machine's hundreds.
  EXPECT_LE(visible, 8) << "its /proc shows the namespace, not the machine";
  // Whatever kills the guardian, the kernel ends the namespace: nothing escapes.
  ::kill(guard.pid, SIGKILL);
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 2s));
  std::filesystem::remove(pids);
}

/// The guardian's own processes below `guardian` (a PID namespace's parent and init).
std::vector<pid_t> helpers_of(pid_t guardian) {
  std::vector<pid_t> helpers;
  for (const auto& process : guardian::descendants_of(guardian::read_process_table(), guardian)) {
    const std::string comm = slurp("/proc/" + std::to_string(process.pid) + "/comm");
    if (comm.rfind("s3lect-ns-", 0) == 0) helpers.push_back(process.pid);
  }
  return helpers;
}

/// What a process of `user` (-1: this one's) gets from `pid`: 0 when nothing, else 1 when
/// pidfd_getfd took a descriptor, 2 when /proc/PID/environ could be read.
int what_a_process_of_the_user_takes(pid_t pid, int user) {
  const pid_t checker = ::fork();
  if (checker == 0) {
    if (user >= 0 && (::setresgid(user, user, user) != 0 || ::setresuid(user, user, user) != 0)) {
      ::_exit(3);
    }
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    for (int fd = 3; pidfd >= 0 && fd < 64; ++fd) {
      if (::syscall(SYS_pidfd_getfd, pidfd, fd, 0) >= 0) ::_exit(1);
    }
    char byte = 0;
    const int environ_fd = ::open(("/proc/" + std::to_string(pid) + "/environ").c_str(), O_RDONLY);
    if (environ_fd >= 0 && ::read(environ_fd, &byte, 1) >= 0) ::_exit(2);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(checker, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

TEST_F(Guardian, NeitherItNorItsHelpersGiveAProcessOfTheirUserADescriptorOrTheirEnvironment) {
  if (!linux_facilities) GTEST_SKIP() << "PR_SET_DUMPABLE is Linux's";
  // The same user on both sides, as a hostile job has: nobody when the test runs as root, whose
  // checks would pass anyway.
  const int user = ::geteuid() == 0 ? 65534 : -1;
  guardian_setup setup{{"sleep", "600." + marker + "3"}};
  setup.user = user;
  if (allowed("pid-namespace", user)) setup.isolation = "pid-namespace";
  guardian_under_test guard(setup);
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 1; }));
  EXPECT_EQ(what_a_process_of_the_user_takes(guard.pid, user), 0) << "the guardian";
  for (const pid_t helper : helpers_of(guard.pid)) {
    EXPECT_EQ(what_a_process_of_the_user_takes(helper, user), 0) << "helper " << helper;
  }
  if (setup.isolation == "pid-namespace") {
    EXPECT_EQ(helpers_of(guard.pid).size(), 2U);
  }
}

TEST_F(Guardian, ItsHelpersHoldNoneOfItsDescriptorsButThoseItWasGivenForTheJob) {
  if (!allowed("pid-namespace")) GTEST_SKIP() << "no PID namespace here: " << probe();
  guardian_under_test guard({{"sleep", "600." + marker + "3"}, "pid-namespace"});
  ASSERT_TRUE(guard.expect<guardian::job_started>());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 1; }));
  // What the test itself hands on (its descriptors without close-on-exec) the job gets too;
  // anything else a helper holds would be the guardian's (its control socket above all).
  std::set<std::string> handed_on;
  for (const int fd : guardian::open_descriptors()) {
    if ((::fcntl(fd, F_GETFD) & FD_CLOEXEC) == 0) {
      handed_on.insert(std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd)));
    }
  }
  const auto helpers = helpers_of(guard.pid);
  ASSERT_EQ(helpers.size(), 2U);
  for (const pid_t helper : helpers) {
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(helper) + "/fd")) {
      if (std::stoi(entry.path().filename().string()) <= 2) continue;
      const auto target = std::filesystem::read_symlink(entry.path()).string();
      EXPECT_EQ(handed_on.count(target), 1U) << "helper " << helper << " holds " << target;
    }
  }
}

TEST_F(Guardian, InItsOwnCgroupTheJobCannotLeaveItAndTheCgroupGoesWithIt) {
  if (!allowed("cgroup")) GTEST_SKIP() << "no cgroup of its own here: " << probe();
  guardian_under_test guard({{"sh", "-c", job_tree_command(marker)}, "cgroup"});
  const auto started = guard.expect<guardian::job_started>();
  ASSERT_TRUE(started);
  ASSERT_FALSE(started->cgroup.empty());
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }));
  std::istringstream members(slurp(started->cgroup + "/cgroup.procs"));
  int count = 0;
  for (pid_t pid; members >> pid;) ++count;
  EXPECT_EQ(count, 3) << "the background sleep, the daemon, and sh exec'd as the main sleep";
  guard.close_control();
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 2s));
  EXPECT_EQ(guard.wait_exit(), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(started->cgroup));
}

}  // namespace
