#include "guardian/guardian.hpp"

#include "base/platform.hpp"
#include "guardian/control_socket.hpp"
#include "guardian/loop_events.hpp"
#include "guardian/process_table.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <sys/syscall.h>
#endif

#include <cerrno>
#include <cstring>
#include <ctime>

extern char** environ;

namespace s3lect::guardian {

std::int64_t boot_now_ns() {
  timespec now{};
  ::clock_gettime(detail::boot_clock_id, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

namespace {

/// While the tree is being killed, how often /proc is read again for processes that escaped
/// the last pass (forked while it was read).
constexpr std::int64_t kill_rescan_ns = 10'000'000;

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string ms_text(std::int64_t ns) {
  return std::to_string(ns / 1'000'000);
}

class guardian_loop {
 public:
  guardian_loop(const guardian_settings& settings, const guardian_log& log)
      : settings_(settings), log_(log), confirmed_(settings.confirmed) {}

  int run();

 private:
  bool start_job();
  void on_control();
  void on_message(std::string_view text);
  void on_packet(const to_guardian& message);
  void on_s3lect_gone();
  void on_child();
  void on_timer();
  void begin_stop(std::chrono::milliseconds grace, end_cause cause);
  void begin_kill(end_cause cause);
  void kill_pass();
  /// Signals the job's first process and, without a PID namespace, the command's group.
  void signal_group(int signal);
  std::optional<std::int64_t> next_wake() const;
  void finish_job();
  void send(const from_guardian& message);
  [[noreturn]] void release();
  bool job_over() const { return main_status_ && tree_gone_; }

  const guardian_settings& settings_;
  const guardian_log& log_;
  lead_until confirmed_;
  int control_ = -1;
  control_reader control_reader_;
  child_exits child_exits_;
  deadline_alarm alarm_;
  launched_job job_;
  std::optional<int> main_status_;
  bool tree_gone_ = false;
  std::optional<end_cause> cause_;
  std::optional<std::int64_t> kill_at_;  // SIGKILL then: a stop's grace ends
  bool killing_ = false;
  unsigned leftovers_ = 0;
  bool s3lect_gone_ = false;
  std::int64_t gone_at_ = 0;
  unsigned killed_when_gone_ = 0;
  std::optional<unsigned> first_kill_pass_;  // how many processes the first SIGKILL pass hit
  bool farewell_ = false;
  bool ended_sent_ = false;
};

void guardian_loop::send(const from_guardian& message) {
  if (s3lect_gone_) return;
  // A closed socket is s3lect gone, found by the next read (never a SIGPIPE).
  send_control_message(control_, encode(message));
}

bool guardian_loop::start_job() {
  if (boot_now_ns() >= confirmed_.boot_ns) {
    send(job_failed{ETIME, "deadline"});
    return false;
  }
  auto launched = launch_job(settings_.launch);
  if (auto* error = std::get_if<launch_error>(&launched)) {
    send(job_failed{error->error, error->step});
    return false;
  }
  job_ = std::move(std::get<launched_job>(launched));
  send(job_started{job_.command, isolation_name(settings_.launch.level),
                   job_.cgroup ? job_.cgroup->directory() : std::string()});
  return true;
}

void guardian_loop::begin_stop(std::chrono::milliseconds grace, end_cause cause) {
  if (main_status_ || killing_ || kill_at_) return;
  cause_ = cause;
  if (grace.count() <= 0) return begin_kill(end_cause::killed);
  kill_at_ = boot_now_ns() + std::chrono::nanoseconds(grace).count();
  // Without a process table (no /proc), the command's group: one SIGTERM each, never two.
  if (signal_descendants(::getpid(), SIGTERM) == 0) signal_group(SIGTERM);
}

void guardian_loop::begin_kill(end_cause cause) {
  // A job still running when SIGKILL comes was killed; a deadline stop stays a deadline stop.
  if (!main_status_ && cause_ != end_cause::deadline) cause_ = cause;
  killing_ = true;
  kill_at_.reset();
  kill_pass();
}

void guardian_loop::kill_pass() {
  if (job_.cgroup) job_.cgroup->kill_all();
  const unsigned signalled = signal_descendants(::getpid(), SIGKILL);
  if (!first_kill_pass_) first_kill_pass_ = signalled;
  // Without /proc (a stripped container) the process table is empty: the job's first process
  // and, without a PID namespace, the command's group at least (with one, the first process's
  // death ends the namespace). Until the guardian reaps it, the first process's PID, which is
  // also the command's group's, cannot have been reused.
  if (main_status_) return;
  signal_group(SIGKILL);
}

void guardian_loop::signal_group(int signal) {
  ::kill(job_.root, signal);
  if (!settings_.launch.level.pid_namespace) ::kill(-job_.command, signal);
}

void guardian_loop::on_packet(const to_guardian& message) {
  if (const auto* until = std::get_if<lead_until>(&message)) {
    if (until->boot_ns > confirmed_.boot_ns) confirmed_ = *until;
  } else if (const auto* signal = std::get_if<forward_signal>(&message)) {
    if (main_status_ || killing_) return;
    ::kill(-job_.command, signal->signal);
    // A command that left its process group (setsid) still gets it.
    if (::getpgid(job_.command) != job_.command) ::kill(job_.command, signal->signal);
  } else if (const auto* stop = std::get_if<stop_job>(&message)) {
    begin_stop(std::chrono::milliseconds(stop->grace_ms), end_cause::stopped);
  } else if (std::holds_alternative<kill_job>(message)) {
    begin_kill(end_cause::killed);
  } else if (std::holds_alternative<farewell>(message)) {
    farewell_ = true;
    if (!job_over()) begin_kill(end_cause::killed);
  }
}

void guardian_loop::on_s3lect_gone() {
  s3lect_gone_ = true;
  gone_at_ = boot_now_ns();
  if (job_over()) return;
  // The kill before anything else, the log included: a process of the job that stops the
  // guardian again and again (after the kernel resumed it for s3lect's death) must find it
  // done.
  begin_kill(end_cause::killed);
  killed_when_gone_ = first_kill_pass_.value_or(0);
  log_.warning("s3lect is gone: killing its job",
               {{"term", confirmed_.term}, {"pid", job_.command}});
}

void guardian_loop::on_control() {
  char bytes[max_packet];
  const ssize_t got = ::recv(control_, bytes, sizeof bytes, 0);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
  // End of file: a message it cut short is never acted on.
  if (got <= 0) return on_s3lect_gone();
  control_reader_.add(std::string_view(bytes, static_cast<std::size_t>(got)));
  // One read may bring several messages: poll would not report those already read.
  while (const auto text = control_reader_.next()) on_message(*text);
  if (control_reader_.broken()) {
    log_.error("s3lect's messages cannot be read any more: taking it as gone");
    on_s3lect_gone();
  }
}

void guardian_loop::on_message(std::string_view text) {
  if (auto message = decode_to_guardian(text)) {
    on_packet(*message);
  } else {
    log_.error("unreadable message from s3lect: ignored", {{"message", std::string(text)}});
  }
}

void guardian_loop::on_child() {
  child_exits_.drain();
  for (;;) {
    int status = 0;
    const pid_t reaped = ::waitpid(-1, &status, WNOHANG);
    if (reaped == 0) return;
    if (reaped < 0) {
      tree_gone_ = errno == ECHILD;
      return;
    }
    if (reaped != job_.root || main_status_) continue;
    main_status_ = shell_status(status);
    if (!cause_) cause_ = end_cause::exited;
    // Whatever the command left behind must not outlive it: it could still act for a
    // leadership that its command's end has just given up.
    leftovers_ = signal_descendants(::getpid(), SIGKILL) + read_leftovers(job_);
    // Without a process table (no /proc), the command's group at least: its ID cannot be
    // reused while the group has members.
    if (!settings_.launch.level.pid_namespace) ::kill(-job_.command, SIGKILL);
    killing_ = true;
    kill_at_.reset();
    kill_pass();
  }
}

void guardian_loop::on_timer() {
  const std::int64_t now = boot_now_ns();
  if (killing_) return kill_pass();
  if (kill_at_ && now >= *kill_at_) return begin_kill(end_cause::killed);
  if (!kill_at_ && !main_status_ && now >= confirmed_.boot_ns) {
    log_.warning("leadership not confirmed in time: stopping the job",
                 {{"term", confirmed_.term},
                  {"pid", job_.command},
                  {"late_ms", (now - confirmed_.boot_ns) / 1'000'000},
                  {"grace_ms", settings_.kill_grace.count()}});
    begin_stop(settings_.kill_grace, end_cause::deadline);
  }
}

std::optional<std::int64_t> guardian_loop::next_wake() const {
  if (killing_ && !tree_gone_) return boot_now_ns() + kill_rescan_ns;
  if (kill_at_) return *kill_at_;
  if (!main_status_) return confirmed_.boot_ns;
  return std::nullopt;
}

void guardian_loop::finish_job() {
  if (job_.cgroup) job_.cgroup->remove();
  if (ended_sent_) return;
  ended_sent_ = true;
  send(job_ended{*main_status_, cause_.value_or(end_cause::exited), leftovers_});
}

[[noreturn]] void guardian_loop::release() {
  std::vector<std::string> args{"s3lect",      "__guardian-release",
                                "--term",      std::to_string(confirmed_.term),
                                "--nonce",     confirmed_.nonce,
                                "--processes", std::to_string(killed_when_gone_),
                                "--kill-ms",   ms_text(boot_now_ns() - gone_at_)};
  args.insert(args.end(), settings_.release->run_args.begin(), settings_.release->run_args.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment_strings =
      settings_.release->environment.value_or(std::vector<std::string>{});
  std::vector<char*> envp;
  for (auto& variable : environment_strings) envp.push_back(variable.data());
  envp.push_back(nullptr);
  char** const release_environment = settings_.release->environment ? envp.data() : environ;
#if S3LECT_LINUX_FACILITIES
  ::syscall(SYS_execveat, settings_.release->exe_fd, "", argv.data(), release_environment,
            AT_EMPTY_PATH);
#else
  (void)release_environment;
  errno = ENOSYS;  // Without execveat, s3lect gives no release plan (guardian_process.cpp).
#endif
  log_.error("cannot start the release of the lock: followers take over when the lease ends",
             {{"error", std::strerror(errno)}});
  ::_exit(1);
}

int guardian_loop::run() {
  control_ = settings_.control_fd;
  if (!child_exits_.open() || !alarm_.open()) {
    send(job_failed{errno, "guardian"});
    return 1;
  }
  if (!start_job()) return 1;
  while (!(job_over() && (farewell_ || s3lect_gone_))) {
    if (job_over()) finish_job();
    alarm_.arm(next_wake());
    pollfd fds[3] = {{s3lect_gone_ ? -1 : control_, POLLIN, 0},
                     {child_exits_.fd(), POLLIN, 0},
                     {alarm_.fd(), POLLIN, 0}};
    if (::poll(fds, 3, alarm_.poll_timeout_ms()) < 0 && errno != EINTR) return 1;
    if (fds[0].revents != 0) on_control();
    if (fds[1].revents != 0) on_child();
    if (alarm_.fired(fds[2].revents)) on_timer();
  }
  if (job_.cgroup) job_.cgroup->remove();
  if (s3lect_gone_ && !farewell_ && settings_.release) release();
  return 0;
}

}  // namespace

int run_guardian(const guardian_settings& settings, const guardian_log& log) {
  guardian_loop loop(settings, log);
  return loop.run();
}

}  // namespace s3lect::guardian
