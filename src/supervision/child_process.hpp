// A command run by `s3lect run`: started in its own process group, killed with its parent,
// and watched without blocking the io_context (a pidfd, or SIGCHLD where pidfd_open is
// missing).
#pragma once

#include "guardian/descriptors.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/error_code.hpp>

#include <sys/types.h>

#include <chrono>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace s3lect::cli {

/// How a process ended, as a shell reports it: its exit status, or 128 + the signal that
/// killed it.
int shell_status(int wait_status);

/// Where a command name resolves to, as execvp would search $PATH: `path` on success, else
/// `error` is ENOENT (not found) or EACCES (found, but not an executable file).
struct resolved_command {
  std::string path;
  int error = 0;
};

/// Resolves `name`: a name containing '/' is taken as is, others are searched in `search_path`
/// (a $PATH value; empty entries mean the current directory).
resolved_command resolve_command(const std::string& name, const std::string& search_path);

/// The file descriptors above 2 that are open now (guardian/descriptors.hpp), e.g. those this
/// process inherited (systemd socket activation) and should hand on to its commands. Call
/// before opening anything.
using guardian::open_descriptors;

/// This process's environment with `overrides` replacing or adding variables; with
/// `inherited`, only the variables it names are taken from this process.
std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& overrides,
    const std::optional<std::vector<std::string>>& inherited = std::nullopt);

/// What to start.
struct spawn_request {
  std::string path;               ///< Resolved executable (see resolve_command).
  std::vector<std::string> argv;  ///< argv[0] included.
  /// Added to (or replacing in) this process's environment.
  std::vector<std::pair<std::string, std::string>> environment;
  /// Which of this process's variables the command gets before `environment` is applied: all
  /// (nullopt), or only those named here (the guardian's: nothing secret).
  std::optional<std::vector<std::string>> inherited_variables;
  /// The command starts a session of its own (setsid): no signal to this process's group or
  /// session (a shell's `kill -STOP %1`, a supervisor stopping a service's group, Ctrl-Z)
  /// reaches it. For the guardian, which also keeps own_group_and_death_signal false.
  bool own_session = false;
  /// Descriptors above 2 the command inherits; every other one is closed on exec.
  std::set<int> inherited_descriptors;
  /// The SIGPIPE disposition to give the command when this process changed its own.
  std::optional<bool> sigpipe_ignored;
  /// The command's stdin is /dev/null instead of ours: a command started again after a lost
  /// leadership could not read what its predecessor consumed (consul lock's default).
  bool stdin_from_dev_null = false;
  /// Watch the command with a pidfd where the kernel has one (Linux 5.3); false forces the
  /// SIGCHLD fallback (for its tests).
  bool use_pidfd = true;
  /// Descriptors opened close-on-exec that the command must get all the same (the guardian's
  /// control socket): the child clears their close-on-exec flag.
  std::vector<int> passed_descriptors;
  /// The command leads a process group of its own and gets SIGKILL should this process die
  /// (Linux only: elsewhere nothing ends it when s3lect dies, docs/operations.md).
  /// False for the job guardian, which must outlive s3lect to end the job and release the lock.
  bool own_group_and_death_signal = true;
};

/// A started command. Destroying it while the command runs kills it (and its process group,
/// when it leads one), and reaps it.
class child_process {
 public:
  /// Forks and execs `request`: the command gets its own process group, and SIGKILL should this
  /// process die (PR_SET_PDEATHSIG, Linux only). Between fork and exec the child makes
  /// async-signal-safe calls only. Returns nullptr and sets `error` (with the errno of the failed
  /// step, e.g. ENOENT from exec) when the command could not be started.
  static std::unique_ptr<child_process> spawn(boost::asio::any_io_executor executor,
                                              const spawn_request& request,
                                              boost::system::error_code& error);

  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// The command's pid, which is also its process group id.
  pid_t pid() const noexcept { return pid_; }
  /// The shell status once the command has exited and been reaped.
  std::optional<int> status() const noexcept { return status_; }

  /// Sends `signal` to the command's process group (nothing once it has been reaped).
  void signal_group(int signal) const noexcept;

  /// Waits until the command's main process exits, then SIGKILLs whatever is left in its
  /// process group, reaps it and returns its shell status (at once if already reaped).
  /// Cancellation: any type; the command is unaffected and can be waited for again.
  boost::asio::awaitable<int> async_wait_exit();

  /// Blocks until the command's main process has exited and been reaped, for at most `bound`.
  /// For destructors only, where nothing can be awaited. Returns whether it exited.
  bool wait_exit_for(std::chrono::milliseconds bound);

 private:
  child_process(boost::asio::any_io_executor executor, pid_t pid, int pidfd,
                std::unique_ptr<boost::asio::signal_set> sigchld, bool leads_group);
  /// Reaps the command if its main process has exited.
  std::optional<int> poll_exit();

  pid_t pid_;
  std::optional<int> status_;
  std::optional<boost::asio::posix::stream_descriptor> pidfd_;
  std::unique_ptr<boost::asio::signal_set> sigchld_;  ///< The fallback when pidfd_ is empty.
  bool leads_group_;
};

}  // namespace s3lect::cli
