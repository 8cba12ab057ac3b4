// s3lect-guardian: started by `s3lect run` for each job (guardian.hpp); with --probe, tells
// which isolation this system allows.
#include "base/platform.hpp"
#include "guardian/guardian.hpp"
#include "guardian/guardian_options.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <sys/prctl.h>
#endif

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace s3lect::guardian;

void print_err(const std::string& text) {
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
}

/// The signals ignored when the guardian started: the command gets them ignored too, as it
/// would have without a guardian between it and s3lect.
sigset_t ignored_signals() {
  sigset_t ignored;
  sigemptyset(&ignored);
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      sigaddset(&ignored, signal);
    }
  }
  return ignored;
}

/// The guardian answers to s3lect alone: a Ctrl-C or Ctrl-Z in a terminal, or a SIGTERM meant
/// for s3lect's process group, must not stop or end it (a stopped guardian could not end the
/// job at its deadline). SIGKILL and SIGSTOP still do.
void ignore_job_control() {
  for (const int signal :
       {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGPIPE}) {
    ::signal(signal, SIG_IGN);
  }
}

/// One line per isolation: "NAME ok", or "NAME unavailable STEP: REASON"; then one line per
/// job cgroup a dead guardian left, killed and removed now: "stale PROCESSES DIRECTORY".
int probe(const launch_request& base) {
  for (const isolation level : {isolation{true, false}, isolation{false, true}}) {
    launch_request request = base;
    request.level = level;
    request.probe = true;
    auto launched = launch_job(request);
    std::string line = isolation_name(level);
    if (auto* error = std::get_if<launch_error>(&launched)) {
      line += " unavailable " + launch_problem(*error);
    } else {
      int status = 0;
      const pid_t root = std::get<launched_job>(launched).root;
      while (::waitpid(root, &status, 0) < 0 && errno == EINTR) {
      }
      line += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? " ok" : " unavailable probe: failed";
    }
    line += "\n";
    [[maybe_unused]] const ssize_t ignored = ::write(STDOUT_FILENO, line.data(), line.size());
  }
  if (!base.cgroup_parent.empty()) {
    for (const auto& stale : remove_stale_job_cgroups(base.cgroup_parent)) {
      const std::string line =
          "stale " + std::to_string(stale.processes) + " " + stale.directory + "\n";
      [[maybe_unused]] const ssize_t ignored = ::write(STDOUT_FILENO, line.data(), line.size());
    }
  }
  return 0;
}

/// Marks `fd` close-on-exec (the job must not inherit it); false when it is not open.
bool keep_from_job(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

/// No core dump, no ptrace, no /proc/PID/environ or pidfd_getfd for another process of the
/// user, the job's included: the guardian holds the control socket and, once read, s3lect's
/// environment with its credentials. Its helpers inherit it (fork keeps the flag); the job,
/// an exec, is dumpable again.
void make_undumpable() {
#if S3LECT_LINUX_FACILITIES
  ::prctl(PR_SET_DUMPABLE, 0);
#endif
}

/// The environment in the file `fd` (read_argument_file), or nullopt when `fd` is -1; false
/// in `ok` when the file cannot be read.
std::optional<std::vector<std::string>> environment_from(int fd, bool& ok) {
  if (fd < 0) return std::nullopt;
  auto environment = read_argument_file(fd);
  ok = ok && environment.has_value();
  return environment;
}

}  // namespace

int main(int argc, char** argv) {
  make_undumpable();
  std::string error;
  const auto options =
      parse_guardian_options(std::vector<std::string>(argv + 1, argv + argc), error);
  if (!options) {
    print_err("s3lect-guardian: " + error + " (it is started by `s3lect run`)\n");
    return 2;
  }
  launch_request launch;
  launch.path = options->path;
  launch.argv = options->argv;
  launch.level = options->level;
  launch.ignored = ignored_signals();
  ::sigprocmask(SIG_SETMASK, nullptr, &launch.mask);
  launch.cgroup_parent = own_cgroup().directory;
#if S3LECT_LINUX_FACILITIES
  // Every descendant of the job that loses its parent comes to the guardian rather than to
  // init: setsid and double forks cannot leave its tree.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Should s3lect die while something (a process of the job) has the guardian stopped, the
  // kernel resumes it: it then finds s3lect's end of the socket closed and kills the job. (Were
  // s3lect already gone, the closed socket says so all the same.)
  ::prctl(PR_SET_PDEATHSIG, SIGCONT);
#endif
  if (options->probe) return probe(launch);
  if (!keep_from_job(options->control_fd) ||
      (options->release_exe_fd >= 0 && !keep_from_job(options->release_exe_fd))) {
    print_err("s3lect-guardian: --control-fd or --release-exe-fd is not open\n");
    return 2;
  }
  ignore_job_control();
  bool environments_read = true;
  launch.environment = environment_from(options->job_env_fd, environments_read);
  const auto release_environment = environment_from(options->release_env_fd, environments_read);
  if (!environments_read) {
    print_err("s3lect-guardian: --job-env-fd or --release-env-fd cannot be read\n");
    return 2;
  }

  guardian_settings settings;
  settings.control_fd = options->control_fd;
  settings.confirmed = options->confirmed;
  settings.kill_grace = options->kill_grace;
  settings.launch = launch;
  if (options->release_exe_fd >= 0) {
    const auto run_args = options->release_args_fd >= 0
                              ? read_argument_file(options->release_args_fd)
                              : std::optional<std::vector<std::string>>();
    if (!run_args) {
      print_err("s3lect-guardian: --release-args-fd cannot be read\n");
      return 2;
    }
    settings.release = release_plan{options->release_exe_fd, *run_args, release_environment};
  }
  const guardian_log log(options->log_json, options->log_info, options->log_fields);
  return run_guardian(settings, log);
}
