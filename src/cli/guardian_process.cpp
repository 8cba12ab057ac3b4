#include "cli/guardian_process.hpp"

#include "base/platform.hpp"
#include "guardian/control_socket.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
// std::filesystem rather than Boost.Filesystem, which would need a library of its own.
#define BOOST_DLL_USE_STD_FS
#include <boost/dll/runtime_symbol_info.hpp>

#include <fcntl.h>
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

 private:
  int fd_;
};

bool executable(const std::filesystem::path& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

#if S3LECT_LINUX_FACILITIES

/// An anonymous file holding `args`, each ended by a NUL: how the guardian gets the release's
/// arguments without repeating them on its command line. -1 on failure.
int argument_file(const std::vector<std::string>& args) {
  const int fd = ::memfd_create("s3lect-release-args", MFD_CLOEXEC);
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
  return fd;
}

#endif

}  // namespace

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
  return {};
}

std::vector<std::string> guardian_arguments(const guardian_request& request, int control_fd,
                                            int exe_fd, int release_args_fd) {
  std::vector<std::string> args{"--control-fd",    std::to_string(control_fd),
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
  if (exe_fd >= 0 && release_args_fd >= 0) {
    args.insert(args.end(), {"--release-exe-fd", std::to_string(exe_fd), "--release-args-fd",
                             std::to_string(release_args_fd)});
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
#if S3LECT_LINUX_FACILITIES
  // The binary s3lect runs from, for the release: still this one after an upgrade replaced the
  // file on disk.
  const bool release = !request.release_args.empty();
  const owned_fd exe(release ? ::open("/proc/self/exe", O_PATH | O_CLOEXEC) : -1);
  const owned_fd release_args(release ? argument_file(request.release_args) : -1);
#else
  // No release by the guardian without execveat: when s3lect dies, its followers take over
  // when the lease ends (docs/operations.md, Other systems).
  const owned_fd exe;
  const owned_fd release_args;
#endif
  spawn_request spawn = request.command;
  spawn.path = request.guardian_path;
  spawn.argv = {"s3lect-guardian"};
  const auto args = guardian_arguments(request, theirs.get(), exe.get(), release_args.get());
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.passed_descriptors = {theirs.get()};
  for (const int fd : {exe.get(), release_args.get()}) {
    if (fd >= 0) spawn.passed_descriptors.push_back(fd);
  }
  spawn.own_group_and_death_signal = false;
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
  send(guardian::kill_job{});
  send(guardian::farewell{});
  process_->wait_exit_for(guardian_exit_bound);
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
