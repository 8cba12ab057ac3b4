#include "supervision/child_process.hpp"

#include "base/platform.hpp"
#include "guardian/cloexec.hpp"
#include "guardian/descriptors.hpp"
#include "guardian/process_table.hpp"

#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if S3LECT_LINUX_FACILITIES
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace s3lect::cli {
namespace {

namespace asio = boost::asio;

/// The exit status of a child whose exec failed, as shells use it.
constexpr int exec_failed_status = 127;

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& text : strings) result.push_back(text.data());
  result.push_back(nullptr);
  return result;
}

/// Marks every descriptor above 2 close-on-exec except `keep`: Asio opens its sockets without
/// SOCK_CLOEXEC, and the command must not hold our connections to the store.
void close_on_exec_except(const std::set<int>& keep) {
  for (int fd : open_descriptors()) {
    if (keep.count(fd) != 0) continue;
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

}  // namespace

std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& overrides,
    const std::optional<std::vector<std::string>>& inherited) {
  std::vector<std::string> result;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view variable = *entry;
    const std::string_view name = variable.substr(0, variable.find('='));
    bool replaced = false;
    for (const auto& [override_name, value] : overrides)
      replaced = replaced || name == override_name;
    const bool taken =
        !inherited || std::find(inherited->begin(), inherited->end(), name) != inherited->end();
    if (!replaced && taken) result.emplace_back(variable);
  }
  for (const auto& [name, value] : overrides) result.push_back(name + "=" + value);
  return result;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

resolved_command resolve_command(const std::string& name, const std::string& search_path) {
  const auto check = [](const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return ENOENT;
    if (!S_ISREG(info.st_mode) || ::access(path.c_str(), X_OK) != 0) return EACCES;
    return 0;
  };
  if (name.empty()) return {{}, ENOENT};
  if (name.find('/') != std::string::npos) {
    const int error = check(name);
    return {error == 0 ? name : std::string(), error};
  }
  int error = ENOENT;
  std::string_view rest = search_path;
  while (true) {
    const auto colon = rest.find(':');
    std::string directory(rest.substr(0, colon));
    if (directory.empty()) directory = ".";
    const std::string candidate = directory + "/" + name;
    const int candidate_error = check(candidate);
    if (candidate_error == 0) return {candidate, 0};
    if (candidate_error == EACCES) error = EACCES;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return {{}, error};
}

namespace {

/// A descriptor closed at the end of its scope.
class scoped_fd {
 public:
  explicit scoped_fd(int fd) : fd_(fd) {}
  ~scoped_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  scoped_fd(const scoped_fd&) = delete;
  scoped_fd& operator=(const scoped_fd&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

/// What the child needs after fork, all prepared before it: the child may only make
/// async-signal-safe calls (no allocation), since this process may hold locks it cannot see.
struct exec_plan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  struct sigaction default_action {};
  struct sigaction sigpipe_action {};
  bool set_sigpipe = false;
  pid_t parent = 0;
  sigset_t previous_mask{};
  int status_fd = -1;           ///< The write end of the pipe that gets the exec's errno.
  int stdin_fd = -1;            ///< Becomes the command's stdin when set.
  const int* passed = nullptr;  ///< Descriptors whose close-on-exec flag the child clears.
  std::size_t passed_count = 0;
  bool own_group_and_death_signal = true;
  bool own_session = false;
};

/// The child's side of the fork: resets the signal handlers, leads its own process group, dies
/// with its parent, then execs. Never returns.
[[noreturn]] void exec_child(const exec_plan& plan) {
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    struct sigaction current;
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    if (signal == SIGPIPE && plan.set_sigpipe) {
      ::sigaction(signal, &plan.sigpipe_action, nullptr);
    } else if ((current.sa_flags & SA_SIGINFO) != 0 ||
               (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)) {
      ::sigaction(signal, &plan.default_action, nullptr);
    }
  }
  if (plan.own_session) ::setsid();
  if (plan.own_group_and_death_signal) {
    ::setpgid(0, 0);
#if S3LECT_LINUX_FACILITIES
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died before prctl: then no SIGKILL would ever come.
    if (::getppid() != plan.parent) ::_exit(exec_failed_status);
#endif
  }
  for (std::size_t i = 0; i < plan.passed_count; ++i) ::fcntl(plan.passed[i], F_SETFD, 0);
  ::sigprocmask(SIG_SETMASK, &plan.previous_mask, nullptr);
  if (plan.stdin_fd >= 0 && ::dup2(plan.stdin_fd, STDIN_FILENO) < 0) {
    const int dup_errno = errno;
    [[maybe_unused]] const ssize_t ignored = ::write(plan.status_fd, &dup_errno, sizeof dup_errno);
    ::_exit(exec_failed_status);
  }
  ::execve(plan.path, plan.argv, plan.envp);
  const int exec_errno = errno;
  [[maybe_unused]] const ssize_t ignored = ::write(plan.status_fd, &exec_errno, sizeof exec_errno);
  ::_exit(exec_failed_status);
}

/// Blocks until child `pid` has exec'd (the pipe closes) or reported why it could not: a matter
/// of microseconds, the same wait posix_spawn makes. A child that could not exec is reaped.
/// Returns the exec's errno, 0 when it ran.
int await_exec(pid_t pid, int status_fd) {
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(status_fd, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ::close(status_fd);
  if (got != static_cast<ssize_t>(sizeof exec_errno)) return 0;
  int ignored_status = 0;
  while (::waitpid(pid, &ignored_status, 0) < 0 && errno == EINTR) {
  }
  return exec_errno;
}

/// Forks a child that runs exec_child(plan); returns its pid, or -1 with errno set. Signals stay
/// blocked across the fork, so that no handler of ours (Asio's, which writes to a pipe shared
/// with this process) runs in the child before it resets them.
pid_t fork_and_exec(exec_plan& plan) {
  sigset_t all_signals;
  sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &plan.previous_mask);
  plan.parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(plan);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &plan.previous_mask, nullptr);
  errno = fork_errno;
  return pid;
}

/// The dispositions the child resets its handlers to, SIGPIPE's as `request` asks.
void set_signal_actions(exec_plan& plan, const spawn_request& request) {
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  plan.sigpipe_action = plan.default_action;
  if (request.sigpipe_ignored && *request.sigpipe_ignored) plan.sigpipe_action.sa_handler = SIG_IGN;
  plan.set_sigpipe = request.sigpipe_ignored.has_value();
}

}  // namespace

std::unique_ptr<child_process> child_process::spawn(asio::any_io_executor executor,
                                                    const spawn_request& request,
                                                    boost::system::error_code& error) {
  std::vector<std::string> argv_strings = request.argv;
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<std::string> env_strings =
      environment_with(request.environment, request.inherited_variables);
  std::vector<char*> envp = pointers(env_strings);
  exec_plan plan;
  plan.path = request.path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.passed = request.passed_descriptors.data();
  plan.passed_count = request.passed_descriptors.size();
  plan.own_group_and_death_signal = request.own_group_and_death_signal;
  plan.own_session = request.own_session;
  set_signal_actions(plan, request);

  close_on_exec_except(request.inherited_descriptors);
  // Opened before the fork, like everything the child needs; once dup2 made it the command's
  // stdin, exec closes this copy.
  const scoped_fd dev_null(request.stdin_from_dev_null ? ::open("/dev/null", O_RDONLY | O_CLOEXEC)
                                                       : -1);
  if (request.stdin_from_dev_null && dev_null.get() < 0) {
    error.assign(errno, boost::system::system_category());
    return nullptr;
  }
  plan.stdin_fd = dev_null.get();
  int exec_status[2];
  if (!guardian::open_cloexec_pipe(exec_status)) {
    error.assign(errno, boost::system::system_category());
    return nullptr;
  }
  plan.status_fd = exec_status[1];

  const pid_t pid = fork_and_exec(plan);
  const int fork_errno = errno;
  ::close(exec_status[1]);
  if (pid < 0) {
    ::close(exec_status[0]);
    error.assign(fork_errno, boost::system::system_category());
    return nullptr;
  }
  // Both sides set the group, so that it exists whichever runs first: signals sent to it right
  // after this function returns must reach the child.
  if (request.own_group_and_death_signal) ::setpgid(pid, pid);
  if (const int exec_errno = await_exec(pid, exec_status[0])) {
    error.assign(exec_errno, boost::system::system_category());
    return nullptr;
  }

  const int pidfd = request.use_pidfd ? guardian::open_pidfd(pid) : -1;
  std::unique_ptr<asio::signal_set> sigchld;
  // Without a pidfd: SIGCHLD. The set exists before the first poll for the exit, so no exit
  // can slip between the two.
  if (pidfd < 0) sigchld = std::make_unique<asio::signal_set>(executor, SIGCHLD);
  error.clear();
  return std::unique_ptr<child_process>(new child_process(
      std::move(executor), pid, pidfd, std::move(sigchld), request.own_group_and_death_signal));
}

child_process::child_process(asio::any_io_executor executor, pid_t pid, int pidfd,
                             std::unique_ptr<asio::signal_set> sigchld, bool leads_group)
    : pid_(pid), sigchld_(std::move(sigchld)), leads_group_(leads_group) {
  if (pidfd >= 0) pidfd_.emplace(std::move(executor), pidfd);
}

child_process::~child_process() {
  if (status_) return;
  if (leads_group_) ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int wait_status = 0;
  while (::waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
}

void child_process::signal_group(int signal) const noexcept {
  if (status_) return;
  if (leads_group_) ::kill(-pid_, signal);
  // A command that left its group (setsid) is still ours to stop.
  if (::getpgid(pid_) != pid_) ::kill(pid_, signal);
}

std::optional<int> child_process::poll_exit() {
  if (status_) return status_;
  siginfo_t info{};
  int result;
  do {
    result = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (result < 0 && errno == EINTR);
  if (result == 0 && info.si_pid != pid_) return std::nullopt;
  // Exited (or, impossibly, reaped behind our back). Until it is reaped its pid cannot be
  // reused, so signalling its group here cannot hit a stranger: the command's leftovers must
  // not outlive it, as they could otherwise still act for a leader that is gone.
  if (leads_group_) ::kill(-pid_, SIGKILL);
  int wait_status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &wait_status, 0);
  } while (reaped < 0 && errno == EINTR);
  status_ = reaped == pid_ ? shell_status(wait_status) : 1;
  return status_;
}

bool child_process::wait_exit_for(std::chrono::milliseconds bound) {
  const auto give_up = std::chrono::steady_clock::now() + bound;
  while (!poll_exit()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    ::usleep(1000);
  }
  return true;
}

asio::awaitable<int> child_process::async_wait_exit() {
  for (;;) {
    if (auto status = poll_exit()) co_return *status;
    if (pidfd_) {
      co_await pidfd_->async_wait(asio::posix::stream_descriptor::wait_read, asio::use_awaitable);
    } else {
      co_await sigchld_->async_wait(asio::use_awaitable);
    }
  }
}

}  // namespace s3lect::cli
