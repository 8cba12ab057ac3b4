// s3lect-guardian started as `s3lect run` starts it (its control socket pair, a first
// deadline, the command after --), with the test in s3lect's place on the other end.
#pragma once

#include "guardian/control_socket.hpp"
#include "guardian/guardian.hpp"
#include "guardian/protocol.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace s3lect::test {

/// The guardian built in the build tree's bin/, beside s3lect.
inline std::string guardian_path() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin" /
          "s3lect-guardian")
      .string();
}

/// What a test starts a guardian with.
struct guardian_setup {
  std::vector<std::string> command;  ///< argv; argv[0] is run from /bin or /usr/bin.
  std::string isolation = "guardian";
  std::chrono::milliseconds deadline_in{std::chrono::seconds{30}};
  std::chrono::milliseconds kill_grace{std::chrono::milliseconds{300}};
  /// Run the guardian as this user (util-linux's setpriv, when the test runs as root); -1: as
  /// the test's own user.
  int user = -1;
};

class guardian_under_test {
 public:
  explicit guardian_under_test(const guardian_setup& setup) {
    int pair[2];
    EXPECT_TRUE(guardian::open_control_pair(pair));
    control_ = pair[0];
    ::fcntl(pair[1], F_SETFD, 0);  // the guardian's end, inherited
    const std::int64_t deadline =
        guardian::boot_now_ns() + std::chrono::nanoseconds(setup.deadline_in).count();
    std::vector<std::string> args{"s3lect-guardian",
                                  "--control-fd",
                                  std::to_string(pair[1]),
                                  "--until-ns",
                                  std::to_string(deadline),
                                  "--term",
                                  "7",
                                  "--nonce",
                                  "0123456789abcdef",
                                  "--kill-grace-ms",
                                  std::to_string(setup.kill_grace.count()),
                                  "--isolation",
                                  setup.isolation,
                                  "--",
                                  executable(setup.command.at(0))};
    args.insert(args.end(), setup.command.begin(), setup.command.end());
    std::string path = guardian_path();
    if (setup.user >= 0) {
      // setpriv execs the guardian: the same process, with the control socket.
      const std::string id = std::to_string(setup.user);
      args[0] = path;
      args.insert(args.begin(), {"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups"});
      path = executable("setpriv");
    }
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ), 0);
    ::close(pair[1]);
    started_at = std::chrono::steady_clock::now();
  }

  ~guardian_under_test() {
    if (control_ >= 0) ::close(control_);
    if (!exit_status_) {
      ::kill(pid, SIGCONT);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  guardian_under_test(const guardian_under_test&) = delete;
  guardian_under_test& operator=(const guardian_under_test&) = delete;

  /// The next message, waiting at most `limit`; nullopt on timeout or end of file.
  std::optional<guardian::from_guardian> receive(
      std::chrono::milliseconds limit = std::chrono::seconds{10}) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (const auto text = reader_.next()) return guardian::decode_from_guardian(*text);
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          give_up - std::chrono::steady_clock::now());
      pollfd ready{control_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char bytes[guardian::max_packet];
      const ssize_t got = ::recv(control_, bytes, sizeof bytes, 0);
      if (got <= 0) return std::nullopt;
      reader_.add(std::string_view(bytes, static_cast<std::size_t>(got)));
    }
  }

  /// The next message, expected to be of type T.
  template <class T>
  std::optional<T> expect(std::chrono::milliseconds limit = std::chrono::seconds{10}) {
    const auto message = receive(limit);
    if (!message || !std::holds_alternative<T>(*message)) {
      ADD_FAILURE() << "not the message expected: "
                    << (message ? guardian::encode(*message) : std::string("none"));
      return std::nullopt;
    }
    return std::get<T>(*message);
  }

  void send(const guardian::to_guardian& message) {
    EXPECT_TRUE(guardian::send_control_message(control_, guardian::encode(message)));
  }

  /// Closes s3lect's end of the socket, as s3lect's death does.
  void close_control() {
    ::close(control_);
    control_ = -1;
  }

  /// The guardian's exit status, waiting at most `limit`.
  std::optional<int> wait_exit(std::chrono::milliseconds limit = std::chrono::seconds{10}) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!exit_status_ && std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    return exit_status_;
  }

  /// Milliseconds since the guardian was started.
  long long elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 started_at)
        .count();
  }

  pid_t pid = -1;
  std::chrono::steady_clock::time_point started_at;

 private:
  static std::string executable(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    for (const char* directory : {"/bin/", "/usr/bin/"}) {
      if (::access((directory + name).c_str(), X_OK) == 0) return directory + name;
    }
    return name;
  }

  int control_ = -1;
  guardian::control_reader reader_;
  std::optional<int> exit_status_;
};

}  // namespace s3lect::test
