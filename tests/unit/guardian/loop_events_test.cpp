// The guardian's platform parts, in the build at hand (Linux facilities, or the other systems'
// fallbacks with S3LECT_PORTABLE_FALLBACKS): its alarm wakes poll at, never before, its deadline;
// a child's exit makes its SIGCHLD descriptor readable; its pipes and control socket pairs are
// close-on-exec; and without Linux, the Linux-only isolations are refused by name.
#include "guardian/loop_events.hpp"
#include "base/platform.hpp"
#include "guardian/cloexec.hpp"
#include "guardian/control_socket.hpp"
#include "guardian/guardian.hpp"
#include "guardian/job_launch.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace {

namespace guardian = s3lect::guardian;

constexpr std::int64_t ms = 1'000'000;

/// One poll on what the guardian's loop would watch for `alarm`; true when the alarm fired.
bool poll_alarm(guardian::deadline_alarm& alarm) {
  pollfd watched{alarm.fd(), POLLIN, 0};
  if (::poll(&watched, 1, alarm.poll_timeout_ms()) < 0) return false;
  return alarm.fired(watched.revents);
}

TEST(GuardianLoopEvents, TheAlarmWakesPollAtItsDeadlineNeverBefore) {
  guardian::deadline_alarm alarm;
  ASSERT_TRUE(alarm.open());
  const std::int64_t wake = guardian::boot_now_ns() + 50 * ms;
  alarm.arm(wake);
  int polls = 0;
  while (!poll_alarm(alarm)) {
    ASSERT_LT(++polls, 100) << "the alarm never fired";
  }
  const std::int64_t woke = guardian::boot_now_ns();
  EXPECT_GE(woke, wake);
  EXPECT_LT(woke, wake + 2000 * ms);
}

TEST(GuardianLoopEvents, PollTimesOutOnlyForAnArmedAlarmWithoutADescriptor) {
  guardian::deadline_alarm alarm;
  ASSERT_TRUE(alarm.open());
  alarm.arm(guardian::boot_now_ns() + 3600'000 * ms);
  if (alarm.fd() >= 0) {
    EXPECT_EQ(alarm.poll_timeout_ms(), -1) << "the descriptor wakes poll, not a timeout";
  } else {
    EXPECT_GT(alarm.poll_timeout_ms(), 3'599'000) << "an hour away";
  }
  alarm.arm(std::nullopt);
  EXPECT_EQ(alarm.poll_timeout_ms(), -1);
  EXPECT_FALSE(alarm.fired(0));
}

TEST(GuardianLoopEvents, AChildsExitMakesTheDescriptorReadable) {
  sigset_t saved;
  ::sigprocmask(SIG_SETMASK, nullptr, &saved);
  {
    guardian::child_exits exits;
    ASSERT_TRUE(exits.open());
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(7);
    pollfd watched{exits.fd(), POLLIN, 0};
    int ready;
    do {
      ready = ::poll(&watched, 1, 5000);
    } while (ready < 0 && errno == EINTR);
    EXPECT_EQ(ready, 1) << "no readiness within 5 s of the child's exit";
    exits.drain();
    EXPECT_EQ(::poll(&watched, 1, 0), 0) << "still readable after drain()";
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_EQ(WEXITSTATUS(status), 7);
  }
  ::sigprocmask(SIG_SETMASK, &saved, nullptr);
}

bool close_on_exec(int fd) {
  return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
}

TEST(GuardianLoopEvents, PipesAndSocketPairsAreCloseOnExec) {
  int pipe_ends[2];
  ASSERT_TRUE(guardian::open_cloexec_pipe(pipe_ends));
  int socket_ends[2];
  ASSERT_TRUE(guardian::open_control_pair(socket_ends));
  for (const int fd : {pipe_ends[0], pipe_ends[1], socket_ends[0], socket_ends[1]}) {
    EXPECT_TRUE(close_on_exec(fd)) << fd;
    ::close(fd);
  }
}

TEST(GuardianLoopEvents, WithoutLinuxTheLinuxIsolationsAreRefusedByName) {
  if (s3lect::detail::linux_facilities) GTEST_SKIP() << "Linux: namespaces and cgroups exist";
  for (const auto& [level, step] : {std::pair{guardian::isolation{true, false}, "pid-namespace"},
                                    std::pair{guardian::isolation{false, true}, "cgroup"}}) {
    guardian::launch_request request;
    request.path = "/bin/true";
    request.argv = {"true"};
    request.level = level;
    auto launched = guardian::launch_job(request);
    const auto* error = std::get_if<guardian::launch_error>(&launched);
    ASSERT_NE(error, nullptr) << step;
    EXPECT_EQ(error->error, ENOTSUP);
    EXPECT_EQ(error->step, step);
    EXPECT_EQ(guardian::launch_problem(*error),
              std::string(step) + ": not supported on this system (Linux only)");
  }
}

}  // namespace
