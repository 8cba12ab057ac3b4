#include "supervision/guardian_process.hpp"

#include "base/platform.hpp"
#include "guardian/control_socket.hpp"
#include "guardian/process_table.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
// std::filesystem rather than Boost.Filesystem, which would need a library of its own.
#define BOOST_DLL_USE_STD_FS
#include <boost/dll/runtime_symbol_info.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <sys/mman.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace s3lect::cli {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// How long a guardian destroyed while running gets to kill its job and exit, before it is
/// killed itself (its job's direct child then dies with it).
constexpr std::chrono::milliseconds guardian_exit_bound{2000};

/// How long the job's tree is killed for, pass after pass, when the guardian does not answer.
constexpr std::chrono::milliseconds tree_kill_bound{1000};

/// A descriptor closed at the end of its scope unless released.
class owned_fd {
 public:
  explicit owned_fd(int fd = -1) : fd_(fd) {}
  ~owned_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

bool executable(const std::filesystem::path& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

#if S3LECT_LINUX_FACILITIES

/// An anonymous file holding `args`, each ended by a NUL, sealed against any change: how the
/// guardian gets the release's arguments and the environments, with the credentials in them,
/// without repeating them on its command line or in its own environment (which ps and
/// /proc/PID/environ show). -1 on failure.
int argument_file(const char* name, const std::vector<std::string>& args) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  std::string content;
  for (const auto& arg : args) content.append(arg).push_back('\0');
  std::string_view rest = content;
  while (!rest.empty()) {
    const ssize_t put = ::write(fd, rest.data(), rest.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      ::close(fd);
      return -1;
    }
    rest.remove_prefix(static_cast<std::size_t>(put));
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

#endif

/// The files the guardian gets besides its control socket: the command's environment and, for
/// the release, the s3lect binary, the release's arguments and s3lect's environment. -1 where
/// this system has none (no memfd, no execveat).
struct guardian_files {
  owned_fd job_environment;
  owned_fd exe;
  owned_fd release_args;
  owned_fd release_environment;

  /// Opens them for `request`; false with errno set on failure.
  bool open(const guardian_request& request) {
#if S3LECT_LINUX_FACILITIES
    // In sealed files, so that the guardian's own environment holds nothing secret.
    job_environment.reset(
        argument_file("s3lect-job-environment", environment_with(request.command.environment)));
    if (job_environment.get() < 0) return false;
    if (request.release_args.empty()) return true;
    // The binary s3lect runs from: still this one after an upgrade replaced the file on disk.
    exe.reset(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
    release_args.reset(argument_file("s3lect-release-args", request.release_args));
    release_environment.reset(argument_file("s3lect-release-environment", environment_with({})));
    return exe.get() >= 0 && release_args.get() >= 0 && release_environment.get() >= 0;
#else
    // No memfd: the guardian gets the command's environment as its own. No release by the
    // guardian without execveat: when s3lect dies, its followers take over when the lease ends
    // (docs/operations.md, Other systems).
    (void)request;
    return true;
#endif
  }

  /// Those that are open.
  std::vector<int> descriptors() const {
    std::vector<int> open;
    for (const owned_fd* fd : {&job_environment, &exe, &release_args, &release_environment}) {
      if (fd->get() >= 0) open.push_back(fd->get());
    }
    return open;
  }
};

}  // namespace

std::vector<std::string> guardian_runtime_variables() {
  return {"LD_PRELOAD",   "LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS",
          "LSAN_OPTIONS", "TSAN_OPTIONS",    "MSAN_OPTIONS"};
}

std::string find_guardian() {
  if (const char* configured = std::getenv("S3LECT_GUARDIAN"); configured && *configured) {
    return configured;
  }
  // This binary's path: /proc/self/exe on Linux, _NSGetExecutablePath on macOS, a sysctl on
  // FreeBSD.
  std::error_code ec;
  const std::filesystem::path self = boost::dll::program_location(ec);
  if (ec) return {};
  const auto beside = self.parent_path() / "s3lect-guardian";
  if (executable(beside)) return beside.string();
  const auto installed =
      (self.parent_path() / S3LECT_GUARDIAN_FROM_BINDIR / "s3lect-guardian").lexically_normal();
  if (executable(installed)) return installed.string();
  // A CLI moved away from its prefix (a package manager's tools directory): where the build
  // installed the guardian.
  if (executable(S3LECT_GUARDIAN_PATH)) return S3LECT_GUARDIAN_PATH;
  return {};
}

std::vector<std::string> guardian_arguments(const guardian_request& request,
                                            const guardian_descriptors& fds) {
  std::vector<std::string> args{"--control-fd",    std::to_string(fds.control),
                                "--until-ns",      std::to_string(request.confirmed.boot_ns),
                                "--term",          std::to_string(request.confirmed.term),
                                "--nonce",         request.confirmed.nonce,
                                "--kill-grace-ms", std::to_string(request.kill_grace.count()),
                                "--isolation",     guardian::isolation_name(request.level),
                                "--log-format",    request.log_json ? "json" : "text"};
  if (request.log_info) args.emplace_back("--log-info");
  for (const auto& [key, value] : request.log_fields) {
    args.insert(args.end(), {"--log-field", key + "=" + value});
  }
  if (fds.job_environment >= 0) {
    args.insert(args.end(), {"--job-env-fd", std::to_string(fds.job_environment)});
  }
  if (fds.release_exe >= 0 && fds.release_args >= 0 && fds.release_environment >= 0) {
    args.insert(args.end(), {"--release-exe-fd", std::to_string(fds.release_exe),
                             "--release-args-fd", std::to_string(fds.release_args),
                             "--release-env-fd", std::to_string(fds.release_environment)});
  }
  args.emplace_back("--");
  args.push_back(request.command.path);
  args.insert(args.end(), request.command.argv.begin(), request.command.argv.end());
  return args;
}

std::unique_ptr<guardian_process> guardian_process::spawn(asio::any_io_executor executor,
                                                          const guardian_request& request,
                                                          error_code& error) {
  int pair[2];
  if (!guardian::open_control_pair(pair)) {
    error.assign(errno, boost::system::system_category());
    return nullptr;
  }
  owned_fd ours(pair[0]);
  const owned_fd theirs(pair[1]);
  guardian_files files;
  if (!files.open(request)) {
    error.assign(errno, boost::system::system_category());
    return nullptr;
  }
  spawn_request spawn = request.command;
  spawn.path = request.guardian_path;
  spawn.argv = {"s3lect-guardian"};
  const guardian_descriptors fds{theirs.get(), files.job_environment.get(), files.exe.get(),
                                 files.release_args.get(), files.release_environment.get()};
  const auto args = guardian_arguments(request, fds);
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.passed_descriptors = files.descriptors();
  spawn.passed_descriptors.push_back(theirs.get());
  if (files.job_environment.get() >= 0) {
    spawn.environment.clear();
    spawn.inherited_variables = guardian_runtime_variables();
  }
  // Outlives s3lect (to end the job and release), and in a session of its own: a signal to
  // s3lect's process group or session stops or ends s3lect alone, never its job's guardian.
  spawn.own_group_and_death_signal = false;
  spawn.own_session = true;
  auto process = child_process::spawn(executor, spawn, error);
  if (!process) return nullptr;
  asio::posix::stream_descriptor control(executor, ours.release());
  return std::unique_ptr<guardian_process>(
      new guardian_process(std::move(process), std::move(control)));
}

guardian_process::guardian_process(std::unique_ptr<child_process> process,
                                   asio::posix::stream_descriptor control)
    : process_(std::move(process)), control_(std::move(control)) {}

guardian_process::~guardian_process() {
  if (process_->status()) return;
  resume_if_stopped();
  send(guardian::kill_job{});
  send(guardian::farewell{});
  if (process_->wait_exit_for(guardian_exit_bound)) return;
  // It does not answer: the tree is ended here, then the guardian (by child_process).
  const auto give_up = std::chrono::steady_clock::now() + tree_kill_bound;
  while (kill_tree_pass(0) > 0 && std::chrono::steady_clock::now() < give_up) ::usleep(5000);
}

bool guardian_process::resume_if_stopped() {
  if (process_->status()) return false;
  const auto seen = guardian::read_process(pid());
  const bool stopped = seen && seen->state == 'T';
  // Without /proc nothing shows the state: SIGCONT to a running process changes nothing.
  if (stopped || !seen) ::kill(pid(), SIGCONT);
  return stopped;
}

unsigned guardian_process::kill_tree_pass(pid_t command) {
  if (process_->status()) return 0;
  const unsigned running = guardian::signal_descendants(pid(), SIGKILL);
  if (!process_table_available() && command > 0) {
    ::kill(-command, SIGKILL);
    ::kill(command, SIGKILL);
  }
  return running;
}

void guardian_process::kill() noexcept {
  if (!process_->status()) ::kill(pid(), SIGKILL);
}

bool guardian_process::process_table_available() {
  return guardian::read_process(::getpid()).has_value();
}

bool guardian_process::send(const guardian::to_guardian& message) {
  if (!control_.is_open()) return false;
  return writer_.send(control_.native_handle(), guardian::encode(message));
}

bool guardian_process::message_ready() {
  // One read may bring several messages; text that does not decode is skipped.
  while (const auto text = reader_.next()) {
    if (auto message = guardian::decode_from_guardian(*text)) ready_.push_back(std::move(*message));
  }
  return !ready_.empty() || closed_ || reader_.broken();
}

std::optional<guardian::from_guardian> guardian_process::take() {
  if (!message_ready() || ready_.empty()) return std::nullopt;
  guardian::from_guardian message = std::move(ready_.front());
  ready_.pop_front();
  return message;
}

asio::awaitable<void> guardian_process::async_wait_message() {
  char bytes[guardian::max_packet];
  while (!message_ready()) {
    error_code ec;
    const std::size_t got = co_await control_.async_read_some(
        asio::buffer(bytes), asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) throw boost::system::system_error(ec);
    // End of file: a message cut short is the guardian gone, never half a message.
    if (ec || got == 0) {
      closed_ = true;
      co_return;
    }
    reader_.add(std::string_view(bytes, got));
  }
}

asio::awaitable<std::optional<guardian::from_guardian>> guardian_process::async_receive() {
  co_await async_wait_message();
  co_return take();
}

}  // namespace s3lect::cli
