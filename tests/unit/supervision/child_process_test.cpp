// The command runner of `s3lect run`: command lookup, exit statuses as shells report them, the
// environment, the process group (leftovers killed with the command), descriptors not leaked,
// exec failures, and both exit watchers (pidfd and SIGCHLD). Local processes only.
#include "supervision/child_process.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using s3lect::cli::child_process;
using s3lect::cli::resolve_command;
using s3lect::cli::shell_status;
using s3lect::cli::spawn_request;

namespace {

std::string search_path() {
  const char* path = std::getenv("PATH");
  return path ? path : "/usr/bin:/bin";
}

spawn_request shell(const std::string& script, bool use_pidfd = true) {
  spawn_request request;
  request.path = resolve_command("sh", search_path()).path;
  request.argv = {"sh", "-c", script};
  request.use_pidfd = use_pidfd;
  return request;
}

/// Runs `request` to its end; the exit status, or -1 when it did not end within 10 s.
int run_to_exit(const spawn_request& request, int signal_after_start = 0) {
  asio::io_context io;
  boost::system::error_code error;
  auto child = child_process::spawn(io.get_executor(), request, error);
  EXPECT_TRUE(child) << error.message();
  if (!child) return -1;
  EXPECT_EQ(::getpgid(child->pid()), child->pid()) << "the command leads its own group";
  if (signal_after_start != 0) child->signal_group(signal_after_start);
  auto status = asio::co_spawn(io, child->async_wait_exit(), asio::use_future);
  io.run_for(10s);
  if (status.wait_for(0s) != std::future_status::ready) return -1;
  return status.get();
}

/// True when `pid` is gone or a zombie, within 5 s: a pidfd becomes readable when the process
/// exits, before it is reaped.
bool dies_soon(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // Already reaped.
  pollfd exited{fd, POLLIN, 0};
  const int ready = ::poll(&exited, 1, 5000);
  ::close(fd);
  return ready == 1;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "s3lect-child-" + std::to_string(::getpid()) + "-" + name;
}

TEST(ResolveCommand, SearchesPathLikeExecvp) {
  auto found = resolve_command("sh", search_path());
  EXPECT_EQ(found.error, 0);
  EXPECT_EQ(found.path.back(), 'h');
  EXPECT_EQ(::access(found.path.c_str(), X_OK), 0);
  EXPECT_EQ(resolve_command("s3lect-no-such-command-xyz", search_path()).error, ENOENT);
  EXPECT_EQ(resolve_command("", search_path()).error, ENOENT);
  EXPECT_EQ(resolve_command("/bin/sh", "").path, "/bin/sh");
  EXPECT_EQ(resolve_command("/nonexistent/s3lect", "").error, ENOENT);
  EXPECT_EQ(resolve_command("/tmp", "").error, EACCES) << "a directory is not executable";

  const std::string plain = temp_path("plain");
  std::ofstream(plain) << "not executable\n";
  ::chmod(plain.c_str(), 0644);
  EXPECT_EQ(resolve_command(plain, "").error, EACCES);
  const auto slash = plain.rfind('/');
  EXPECT_EQ(resolve_command(plain.substr(slash + 1), plain.substr(0, slash)).error, EACCES);
  ::unlink(plain.c_str());
}

TEST(ShellStatus, ReportsExitCodesAndSignalsAsShellsDo) {
  EXPECT_EQ(shell_status(7 << 8), 7);
  EXPECT_EQ(shell_status(SIGTERM), 128 + SIGTERM);
}

TEST(ChildProcess, ReportsTheExitStatus) {
  EXPECT_EQ(run_to_exit(shell("exit 7")), 7);
  EXPECT_EQ(run_to_exit(shell("exit 0")), 0);
}

TEST(ChildProcess, ReportsDeathBySignalAs128PlusTheSignal) {
  EXPECT_EQ(run_to_exit(shell("kill -KILL $$")), 128 + SIGKILL);
  EXPECT_EQ(run_to_exit(shell("sleep 30"), SIGTERM), 128 + SIGTERM);
}

TEST(ChildProcess, WatchesWithSigchldWhereThereIsNoPidfd) {
  EXPECT_EQ(run_to_exit(shell("sleep 0.2; exit 9", false)), 9);
  EXPECT_EQ(run_to_exit(shell("sleep 30", false), SIGTERM), 128 + SIGTERM);
}

TEST(ChildProcess, AddsAndReplacesEnvironmentVariables) {
  ::setenv("S3LECT_TERM", "stale", 1);
  ::setenv("S3LECT_CHILD_TEST_KEPT", "kept", 1);
  auto request = shell(
      "test \"$S3LECT_TERM\" = 5 && test \"$S3LECT_LOCK\" = s3://b/k && "
      "test \"$S3LECT_CHILD_TEST_KEPT\" = kept");
  request.environment = {{"S3LECT_TERM", "5"}, {"S3LECT_LOCK", "s3://b/k"}};
  EXPECT_EQ(run_to_exit(request), 0);
  ::unsetenv("S3LECT_TERM");
  ::unsetenv("S3LECT_CHILD_TEST_KEPT");
}

TEST(ChildProcess, KillsLeftoversOfTheGroupWhenTheCommandExits) {
  const std::string pid_file = temp_path("leftover");
  EXPECT_EQ(run_to_exit(shell("sleep 30 & echo $! > " + pid_file + "; exit 3")), 3);
  std::ifstream in(pid_file);
  pid_t leftover = 0;
  ASSERT_TRUE(in >> leftover);
  EXPECT_TRUE(dies_soon(leftover));
  ::unlink(pid_file.c_str());
}

TEST(ChildProcess, SignalsTheWholeGroup) {
  const std::string pid_file = temp_path("group");
  asio::io_context io;
  boost::system::error_code error;
  auto child = child_process::spawn(io.get_executor(),
                                    shell("sleep 30 & echo $! > " + pid_file + "; wait"), error);
  ASSERT_TRUE(child) << error.message();
  pid_t background = 0;
  for (int i = 0; i < 500 && background == 0; ++i) {
    std::ifstream in(pid_file);
    // Real time for the real shell to write its file.
    if (!(in >> background)) std::this_thread::sleep_for(10ms);
  }
  ASSERT_NE(background, 0);
  EXPECT_EQ(::getpgid(background), child->pid());
  child->signal_group(SIGTERM);
  auto status = asio::co_spawn(io, child->async_wait_exit(), asio::use_future);
  io.run_for(10s);
  ASSERT_EQ(status.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(status.get(), 128 + SIGTERM);
  EXPECT_TRUE(dies_soon(background));
  ::unlink(pid_file.c_str());
}

TEST(ChildProcess, DestructorKillsARunningCommand) {
  asio::io_context io;
  boost::system::error_code error;
  auto child = child_process::spawn(io.get_executor(), shell("sleep 30"), error);
  ASSERT_TRUE(child) << error.message();
  const pid_t pid = child->pid();
  child.reset();
  EXPECT_NE(::kill(pid, 0), 0) << "reaped, so gone";
}

TEST(ChildProcess, ReportsExecFailures) {
  asio::io_context io;
  boost::system::error_code error;
  spawn_request request;
  request.path = "/nonexistent/s3lect-command";
  request.argv = {"s3lect-command"};
  EXPECT_FALSE(child_process::spawn(io.get_executor(), request, error));
  EXPECT_EQ(error.value(), ENOENT);

  const std::string plain = temp_path("noexec");
  std::ofstream(plain) << "echo hi\n";
  ::chmod(plain.c_str(), 0644);
  request.path = plain;
  EXPECT_FALSE(child_process::spawn(io.get_executor(), request, error));
  EXPECT_EQ(error.value(), EACCES);
  ::unlink(plain.c_str());
}

TEST(ChildProcess, PassesOnlyInheritedDescriptors) {
  int ours[2];
  ASSERT_EQ(::pipe(ours), 0);  // Not close-on-exec, as Asio's sockets.
  int handed[2];
  ASSERT_EQ(::pipe(handed), 0);
  auto request = shell("test ! -e /proc/$$/fd/" + std::to_string(ours[0]) +
                       " && test -e /proc/$$/fd/" + std::to_string(handed[0]));
  request.inherited_descriptors = {handed[0]};
  EXPECT_EQ(run_to_exit(request), 0);
  for (int fd : {ours[0], ours[1], handed[0], handed[1]}) ::close(fd);
}

TEST(ChildProcess, GivesDevNullAsStdinWhenAsked) {
  // Our stdin is a pipe here, so that the two cases differ whatever the test runner's is.
  int input[2];
  ASSERT_EQ(::pipe(input), 0);
  const int saved_stdin = ::dup(STDIN_FILENO);
  ASSERT_GE(saved_stdin, 0);
  ASSERT_EQ(::dup2(input[0], STDIN_FILENO), STDIN_FILENO);
  auto request = shell("test \"$(readlink /proc/$$/fd/0)\" = /dev/null");
  EXPECT_EQ(run_to_exit(request), 1) << "stdin is passed by default";
  request.stdin_from_dev_null = true;
  EXPECT_EQ(run_to_exit(request), 0);
  ::dup2(saved_stdin, STDIN_FILENO);
  for (int fd : {saved_stdin, input[0], input[1]}) ::close(fd);
}

TEST(ChildProcess, RestoresTheSigpipeDisposition) {
  struct sigaction original {};
  ::sigaction(SIGPIPE, nullptr, &original);
  ::signal(SIGPIPE, SIG_IGN);
  // With SIGPIPE at its default, `yes` dies of it when the reader goes away.
  auto request = shell("(yes; echo $? > " + temp_path("pipe") + ") | head -c 1 >/dev/null");
  request.sigpipe_ignored = false;
  EXPECT_EQ(run_to_exit(request), 0);
  std::ifstream in(temp_path("pipe"));
  int yes_status = 0;
  ASSERT_TRUE(in >> yes_status);
  EXPECT_EQ(yes_status, 128 + SIGPIPE);
  ::unlink(temp_path("pipe").c_str());
  ::sigaction(SIGPIPE, &original, nullptr);
}

/// Waits for `child` for at most 50 ms (-1 then), then waits again to the end.
asio::awaitable<std::pair<int, int>> wait_cancelled_then_whole(child_process& child) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(50ms);
  auto first = co_await (child.async_wait_exit() || timer.async_wait(asio::use_awaitable));
  const int early = first.index() == 0 ? std::get<0>(first) : -1;
  const int status = co_await child.async_wait_exit();
  co_return std::make_pair(early, status);
}

TEST(ChildProcess, WaitCanBeCancelledAndResumed) {
  asio::io_context io;
  boost::system::error_code error;
  auto child = child_process::spawn(io.get_executor(), shell("sleep 0.3; exit 4"), error);
  ASSERT_TRUE(child) << error.message();
  auto result = asio::co_spawn(io, wait_cancelled_then_whole(*child), asio::use_future);
  io.run_for(10s);
  ASSERT_EQ(result.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(result.get(), std::make_pair(-1, 4));
}

TEST(OpenDescriptors, ListsWhatIsOpenAndNotWhatIsClosed) {
  // Read from /proc/self/fd on Linux, found by asking each number elsewhere: the same answer.
  const int opened = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(opened, 3);
  EXPECT_EQ(s3lect::cli::open_descriptors().count(opened), 1U);
  ::close(opened);
  const std::set<int> after = s3lect::cli::open_descriptors();
  EXPECT_EQ(after.count(opened), 0U);
  EXPECT_EQ(after.count(STDERR_FILENO), 0U) << "0 to 2 are never listed";
}

}  // namespace
