#include "guardian/job_launch.hpp"

#include "base/platform.hpp"
#include "guardian/cloexec.hpp"
#include "guardian/descriptors.hpp"
#include "guardian/process_table.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#endif

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

extern char** environ;

namespace s3lect::guardian {
namespace {

/// The step a child process reports as failed, through the status pipe.
enum class launch_step : int { exec = 1, user_namespace, mounts, proc, fork, cgroup };

const char* step_name(launch_step step) {
  switch (step) {
    case launch_step::exec:
      return "exec";
    case launch_step::user_namespace:
      return "user-namespace";
    case launch_step::mounts:
      return "pid-namespace";
    case launch_step::proc:
      return "proc";
    case launch_step::fork:
      return "fork";
    case launch_step::cgroup:
      return "cgroup";
  }
  return "exec";
}

/// What the job's processes need after the fork, prepared before it.
struct child_plan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  /// What the helpers close first: all the guardian holds but the pipes below.
  const descriptor_closing* closing = nullptr;
  const sigset_t* ignored = nullptr;
  const sigset_t* mask = nullptr;
  int go_fd = -1;      ///< Read end: one byte once the guardian has set the child up.
  int status_fd = -1;  ///< Write end: {errno, step} on failure; closed by a successful exec.
  /// Where the namespace's init reports (with a PID namespace).
  namespace_report* report = nullptr;
  bool probe = false;
};

[[noreturn]] void fail(const child_plan& plan, launch_step step, int error) {
  const std::array<int, 2> report{error, static_cast<int>(step)};
  [[maybe_unused]] const ssize_t ignored = ::write(plan.status_fd, report.data(), sizeof report);
  ::_exit(127);
}

/// Waits for the guardian's go; exits when the guardian died or gave up instead.
void await_go(const child_plan& plan) {
  char go = 0;
  ssize_t got;
  do {
    got = ::read(plan.go_fd, &go, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1) ::_exit(127);
  ::close(plan.go_fd);
}

/// The command's side: its own process group, the signal dispositions and mask the guardian was
/// given, then exec.
[[noreturn]] void exec_command(const child_plan& plan) {
  ::setpgid(0, 0);
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    action.sa_handler = sigismember(plan.ignored, signal) == 1 ? SIG_IGN : SIG_DFL;
    ::sigaction(signal, &action, nullptr);
  }
  ::sigprocmask(SIG_SETMASK, plan.mask, nullptr);
  if (plan.probe) ::_exit(0);
  ::execve(plan.path, plan.argv, plan.envp);
  fail(plan, launch_step::exec, errno);
}

#if S3LECT_LINUX_FACILITIES

/// How many processes the namespace's own /proc shows.
unsigned processes_in_namespace() {
  unsigned count = 0;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(proc)) {
      if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9') ++count;
    }
    ::closedir(proc);
  }
  return count;
}

/// The init of the job's PID namespace: mounts a /proc of the namespace (so that the job's ps,
/// pgrep and /proc/PID agree with its PIDs), starts the command, reaps whatever is orphaned to
/// it, and when the command exits ends the namespace (the kernel kills every process left in it
/// when its init exits) with the command's shell status. Dies with its parent
/// (PR_SET_PDEATHSIG), and so with the guardian, which then ends the namespace the same way.
[[noreturn]] void run_namespace_init(const child_plan& plan) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_NAME, "s3lect-ns-init");  // In ps, not a second guardian.
  // Slave propagation: mounts made outside still reach the job, ours do not leave it.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    fail(plan, launch_step::mounts, errno);
  }
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    fail(plan, launch_step::proc, errno);
  }
  const pid_t command = ::fork();
  if (command < 0) fail(plan, launch_step::fork, errno);
  if (command == 0) exec_command(plan);
  // The command's PID in the namespace, before the status pipe can close: the guardian finds
  // its PID outside by it.
  plan.report->command.store(command, std::memory_order_release);
  ::close(plan.status_fd);
  int command_status = 0;
  for (;;) {
    int status = 0;
    const pid_t reaped = ::wait(&status);
    if (reaped == command) {
      command_status = status;
      // All but this init.
      plan.report->leftovers.store(processes_in_namespace() - 1, std::memory_order_release);
      ::kill(-1, SIGKILL);
    } else if (reaped < 0 && errno == ECHILD) {
      break;
    }
  }
  if (WIFEXITED(command_status)) ::_exit(WEXITSTATUS(command_status));
  ::_exit(WIFSIGNALED(command_status) ? 128 + WTERMSIG(command_status) : 1);
}

#endif

/// The job's process when it is the guardian's child: dies with the guardian (on Linux), waits
/// until the guardian has put it in its cgroup, then becomes the command. Elsewhere nothing
/// ends it when the guardian dies after the go; before it, the go pipe closes and it exits.
[[noreturn]] void run_direct_child(const child_plan& plan, [[maybe_unused]] pid_t guardian) {
#if S3LECT_LINUX_FACILITIES
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != guardian) ::_exit(127);  // The guardian died before prctl.
#endif
  await_go(plan);
  exec_command(plan);
}

#if S3LECT_LINUX_FACILITIES

/// Writes `text` to /proc/self/`file`.
bool write_own_proc(const char* file, const char* text) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/%s", file);
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t length = std::strlen(text);
  const bool ok = ::write(fd, text, length) == static_cast<ssize_t>(length);
  ::close(fd);
  return ok;
}

/// Enters a new user namespace in which this process keeps its user and group (and, once it
/// execs, has no capability, as before): what a process without CAP_SYS_ADMIN needs to make
/// PID and mount namespaces. A process that is not dumpable cannot write its own maps (its
/// /proc files then belong to root), so it is dumpable meanwhile: no process of the job exists
/// yet, and this one holds nothing but its launch pipes (close_inherited_descriptors).
bool enter_user_namespace() {
  char uid_map[64];
  char gid_map[64];
  std::snprintf(uid_map, sizeof uid_map, "%u %u 1\n", ::geteuid(), ::geteuid());
  std::snprintf(gid_map, sizeof gid_map, "%u %u 1\n", ::getegid(), ::getegid());
  ::prctl(PR_SET_DUMPABLE, 1);
  const bool entered = ::unshare(CLONE_NEWUSER) == 0 && write_own_proc("uid_map", uid_map) &&
                       write_own_proc("setgroups", "deny") && write_own_proc("gid_map", gid_map);
  const int error = errno;
  ::prctl(PR_SET_DUMPABLE, 0);
  errno = error;
  return entered;
}

/// The job's first process with a PID namespace: it stays in this machine's PID namespace (so
/// that the guardian reaps it as any child), makes the new PID and mount namespaces (in a user
/// namespace of its own when it lacks the privilege) and forks their init, whose exit status it
/// then takes as its own. Dies with the guardian; the init dies with it.
[[noreturn]] void run_namespace_parent(const child_plan& plan, pid_t guardian) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != guardian) ::_exit(127);  // The guardian died before prctl.
  await_go(plan);
  if (::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
    if (errno != EPERM) fail(plan, launch_step::mounts, errno);
    if (!enter_user_namespace()) fail(plan, launch_step::user_namespace, errno);
    if (::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) fail(plan, launch_step::mounts, errno);
  }
  const pid_t init = ::fork();
  if (init < 0) fail(plan, launch_step::fork, errno);
  if (init == 0) run_namespace_init(plan);
  ::close(plan.status_fd);
  ::prctl(PR_SET_NAME, "s3lect-ns-wait");
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

#endif

/// Kills and reaps a job's first process that will not become a job after all.
void discard(pid_t pid) {
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

/// Reads the child's failure report; nullopt when the pipe closed without one (exec'd).
std::optional<launch_error> read_status(int status_fd) {
  std::array<int, 2> report{};
  ssize_t got;
  do {
    got = ::read(status_fd, report.data(), sizeof report);
  } while (got < 0 && errno == EINTR);
  ::close(status_fd);
  if (got != static_cast<ssize_t>(sizeof report)) return std::nullopt;
  return launch_error{report[0], step_name(static_cast<launch_step>(report[1]))};
}

/// The command's PID, as this machine's PID namespace numbers it, when it runs in a namespace
/// of its own: the process below `root` that has the PID its init reported as its PID in the
/// namespace (stored before the status pipe closed). Not simply "PID 2": a sanitizer's thread
/// in the init takes PIDs too. (Nor its place in the tree: a daemon the command started may be
/// re-parented to the init before the tree is read.)
pid_t namespaced_command(pid_t root, const namespace_report& report) {
  const pid_t inner = report.command.load(std::memory_order_acquire);
  if (inner == 0) return root;
  for (const auto& process : descendants_of(read_process_table(), root)) {
    if (innermost_pid(process.pid) == inner) return process.pid;
  }
  return root;
}

/// Pipes whose ends are closed at the end of the scope unless taken.
struct pipe_pair {
  int read = -1;
  int write = -1;
  bool open() {
    int fds[2];
    if (!open_cloexec_pipe(fds)) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  int take_read() { return std::exchange(read, -1); }
  int take_write() { return std::exchange(write, -1); }
  ~pipe_pair() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& text : strings) out.push_back(text.data());
  out.push_back(nullptr);
  return out;
}

/// Puts the job's first process in its cgroup (its children then start there), then lets it
/// go on.
std::optional<launch_error> set_up_child(pid_t child, const std::optional<job_cgroup>& cgroup,
                                         int go_fd) {
  if (cgroup && !cgroup->adopt(child)) return launch_error{errno, "cgroup"};
  const char go = 1;
  if (::write(go_fd, &go, 1) != 1) return launch_error{errno, "fork"};
  return std::nullopt;
}

/// Forks the job's first process, which becomes the command or a PID namespace's parent;
/// returns its PID, or -1 with errno set.
pid_t fork_job(const child_plan& plan, isolation level) {
  const pid_t guardian = ::getpid();
  const pid_t child = ::fork();
  if (child != 0) return child;
  // Before anything else: what the guardian holds (its control socket above all) must not be
  // in a process that lives beside the job.
  close_inherited_descriptors(*plan.closing);
#if S3LECT_LINUX_FACILITIES
  if (level.pid_namespace) run_namespace_parent(plan, guardian);
#else
  (void)level;
#endif
  run_direct_child(plan, guardian);
}

}  // namespace

std::string isolation_name(isolation level) {
  if (level.pid_namespace && level.cgroup) return "pid-namespace+cgroup";
  if (level.pid_namespace) return "pid-namespace";
  if (level.cgroup) return "cgroup";
  return "guardian";
}

std::optional<isolation> parse_isolation(std::string_view text) {
  if (text == "guardian") return isolation{};
  if (text == "pid-namespace") return isolation{true, false};
  if (text == "cgroup") return isolation{false, true};
  if (text == "pid-namespace+cgroup" || text == "pid-namespace,cgroup" ||
      text == "cgroup+pid-namespace" || text == "cgroup,pid-namespace") {
    return isolation{true, true};
  }
  return std::nullopt;
}

std::string launch_problem(const launch_error& error) {
  // ENOTSUP comes from launch_job alone where the isolation is Linux's.
  const bool linux_only = !detail::linux_facilities && error.error == ENOTSUP;
  return error.step + ": " +
         (linux_only ? "not supported on this system (Linux only)" : std::strerror(error.error));
}

std::variant<launched_job, launch_error> launch_job(const launch_request& request) {
#if !S3LECT_LINUX_FACILITIES
  if (request.level.pid_namespace) return launch_error{ENOTSUP, "pid-namespace"};
  if (request.level.cgroup) return launch_error{ENOTSUP, "cgroup"};
#endif
  launched_job job;
  if (request.level.cgroup) {
    if (request.cgroup_parent.empty()) return launch_error{ENOENT, "cgroup"};
    job.cgroup = job_cgroup::create(request.cgroup_parent);
    if (!job.cgroup) return launch_error{errno, "cgroup"};
  }
  std::vector<std::string> argv_strings = request.argv;
  const std::vector<char*> argv = pointers(argv_strings);
  std::vector<std::string> env_strings = request.environment.value_or(std::vector<std::string>{});
  const std::vector<char*> envp = pointers(env_strings);
  pipe_pair go, status;
  if (!go.open() || !status.open()) return launch_error{errno, "fork"};
  if (request.level.pid_namespace) {
    job.report = shared_report::create();
    if (!job.report) return launch_error{errno, "fork"};
  }
  const descriptor_closing closing = plan_descriptor_closing({go.read, status.write});
  const child_plan plan{request.path.c_str(),
                        argv.data(),
                        request.environment ? envp.data() : environ,
                        &closing,
                        &request.ignored,
                        &request.mask,
                        go.read,
                        status.write,
                        job.report ? &job.report->get() : nullptr,
                        request.probe};
  const pid_t child = fork_job(plan, request.level);
  if (child < 0) return launch_error{errno, "fork"};
  ::close(go.take_read());
  ::close(status.take_write());
  const int go_fd = go.take_write();
  const auto setup_error = set_up_child(child, job.cgroup, go_fd);
  ::close(go_fd);
  if (setup_error) {
    discard(child);
    return *setup_error;
  }
  if (auto failed = read_status(status.take_read())) {
    discard(child);
    return *failed;
  }
  job.root = child;
  job.command = child;
  if (job.report) job.command = namespaced_command(child, job.report->get());
  return job;
}

unsigned read_leftovers(const launched_job& job) {
  return job.report ? job.report->get().leftovers.load(std::memory_order_acquire) : 0;
}

std::optional<shared_report> shared_report::create() {
  void* memory = ::mmap(nullptr, sizeof(namespace_report), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return std::nullopt;
  return shared_report(new (memory) namespace_report);
}

shared_report::shared_report(shared_report&& other) noexcept
    : report_(std::exchange(other.report_, nullptr)) {}

shared_report& shared_report::operator=(shared_report&& other) noexcept {
  if (this != &other) {
    this->~shared_report();
    report_ = std::exchange(other.report_, nullptr);
  }
  return *this;
}

shared_report::~shared_report() {
  if (report_ != nullptr) ::munmap(report_, sizeof(namespace_report));
}

}  // namespace s3lect::guardian
