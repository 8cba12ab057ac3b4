// Runs the built `s3lect` binary against the local Ceph RADOS Gateway for the CLI integration
// tests: the binary's path (S3LECT_CLI, else <build>/s3lect beside <build>/tests), processes
// with their output captured in files, and a fixture with the store's settings and a fresh key.
// Every wait is bounded; only processes the test started are signalled.
#pragma once

#include <s3lect/s3_client.hpp>

#include "support/job_tree.hpp"
#include "support/local_s3_test.hpp"
#include "support/run_until_complete.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace s3lect::test {

namespace cli_detail {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
}  // namespace cli_detail

using namespace cli_detail;

/// The s3lect binary under test.
inline std::string cli_path() {
  if (const char* configured = std::getenv("S3LECT_CLI"); configured && *configured) {
    return configured;
  }
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  return (self.parent_path().parent_path() / "bin" / "s3lect").string();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The number after `"key":` in a flat JSON object, if any.
inline std::optional<long long> json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return std::nullopt;
  const char* start = json.c_str() + at + key.size() + 3;
  char* end = nullptr;
  const long long value = std::strtoll(start, &end, 10);
  if (end == start) return std::nullopt;
  return value;
}

/// True when `pid` no longer runs: gone, or a zombie its new parent has not reaped yet.
inline bool is_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

/// Polls `condition` every 20 ms for up to `limit`.
inline bool eventually(const std::function<bool()>& condition, steady::duration limit) {
  const auto deadline = steady::now() + limit;
  while (steady::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

/// The job guardians s3lect `pid` runs now: its children named s3lect-guardian.
inline std::vector<pid_t> guardians_of(pid_t pid) {
  std::vector<pid_t> guardians;
  const std::string task = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid);
  std::istringstream children(read_file(task + "/children"));
  for (pid_t child = 0; children >> child;) {
    std::string comm = read_file("/proc/" + std::to_string(child) + "/comm");
    if (comm == "s3lect-guardian\n") guardians.push_back(child);
  }
  return guardians;
}

/// One s3lect process, its stdout and stderr captured in files.
struct cli_process {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
  std::optional<int> status;  ///< Shell-style exit status once waited for.

  std::string out() const { return read_file(out_path); }
  std::string err() const { return read_file(err_path); }

  /// Waits up to `limit` for the exit; the exit status (128+N for signal N), or nullopt.
  std::optional<int> wait(steady::duration limit) {
    if (status) return status;
    const auto deadline = steady::now() + limit;
    do {
      int raw = 0;
      const pid_t done = ::waitpid(pid, &raw, WNOHANG);
      if (done == pid) {
        status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        return status;
      }
      std::this_thread::sleep_for(10ms);
    } while (steady::now() < deadline);
    return std::nullopt;
  }
};

class CliIntegration : public local_s3_test {
 protected:
  void SetUp() override {
    local_s3_test::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(::access(cli_path().c_str(), X_OK), 0)
        << cli_path() << " is missing: build the s3lect target (or set S3LECT_CLI)";
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                             "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"}) {
      if (const char* value = std::getenv(name)) saved_env_[name] = value;
      ::unsetenv(name);
    }
    ::setenv("AWS_ACCESS_KEY_ID", s3.access_key.c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", s3.secret_key.c_str(), 1);
    ::setenv("AWS_REGION", s3.region.c_str(), 1);
    key = "cli-test/" + unique_suffix() + ".json";
    scratch = ::testing::TempDir() + "s3lect-cli-" + unique_suffix();
    std::filesystem::create_directories(scratch);
  }

  void TearDown() override {
    for (auto& process : processes_) {
      if (process.status || process.pid <= 0) continue;
      ::kill(-process.pid, SIGCONT);
      ::kill(process.pid, SIGKILL);  // Its guardian kills its command.
      process.wait(10s);
    }
    std::error_code ignored;
    std::filesystem::remove_all(scratch, ignored);
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}) {
      ::unsetenv(name);
    }
    for (const auto& [name, value] : saved_env_) ::setenv(name.c_str(), value.c_str(), 1);
  }

  std::string lock() const { return "s3://" + s3.bucket + "/" + key; }

  /// --lock, --endpoint and --path-style for this test's key.
  std::vector<std::string> store_args(const std::string& endpoint = {}) const {
    return {"--lock", lock(), "--endpoint", endpoint.empty() ? s3.http_endpoint : endpoint,
            "--path-style"};
  }

  /// `run` with short timings: L = 2 s, D = 1.2 s, F = 0.4 s; kill grace 0.5 s < L - D.
  std::vector<std::string> run_args(const std::string& id, const std::string& endpoint = {}) const {
    std::vector<std::string> args{"run"};
    for (auto& arg : store_args(endpoint)) args.push_back(arg);
    for (const char* arg : {"--lease", "2s", "--renew-deadline", "1200ms", "--frequent", "400ms",
                            "--infrequent", "800ms", "--request-timeout", "150ms", "--retry-delays",
                            "50ms,200ms", "--kill-grace", "500ms", "--log-level", "debug"}) {
      args.push_back(arg);
    }
    args.push_back("--id");
    args.push_back(id);
    return args;
  }

  /// Starts s3lect with `args`.
  cli_process& start(const std::vector<std::string>& args) {
    cli_process process;
    const std::string base = scratch + "/p" + std::to_string(processes_.size());
    process.out_path = base + ".out";
    process.err_path = base + ".err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, process.out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, process.err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string path = cli_path();
    std::vector<std::string> argv_strings{path};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // A process group of its own: s3lect and its job guardian, which a test may kill together
    // (crash_node) as a crash of the whole node's processes.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    const int failed =
        ::posix_spawn(&process.pid, path.c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(failed, 0) << std::strerror(failed);
    processes_.push_back(process);
    return processes_.back();
  }

  /// SIGKILLs s3lect and its job guardian at once, as a crash of every process of the node
  /// would: nothing is released. The guardian leads a process group (and session) of its own,
  /// and is stopped first so that it cannot act on s3lect's death. Its command dies with the
  /// guardian when it runs in a PID namespace of its own (the isolation these tests get as
  /// root), or else by its PR_SET_PDEATHSIG as the guardian's child.
  void crash_node(cli_process& process) {
    const auto guardians = guardians_of(process.pid);
    for (const pid_t guardian : guardians) ::kill(-guardian, SIGSTOP);
    ::kill(-process.pid, SIGKILL);
    for (const pid_t guardian : guardians) ::kill(-guardian, SIGKILL);
  }

  /// Runs s3lect with `args` to its end (at most 20 s).
  cli_process& run(const std::vector<std::string>& args) {
    cli_process& process = start(args);
    EXPECT_TRUE(process.wait(20s)) << "s3lect did not finish: " << process.err();
    return process;
  }

  /// `s3lect status` of this test's key.
  cli_process& status() {
    std::vector<std::string> args{"status"};
    for (auto& arg : store_args()) args.push_back(arg);
    return run(args);
  }

  /// Writes `body` at `object_key` unconditionally-new (create-if-absent).
  void put_raw(const std::string& object_key, const std::string& body) {
    asio::io_context io;
    s3_client client(io.get_executor(), s3.config(false));
    auto [ec, result] = run_until_complete<put_result>(io, [&](auto handler) {
      client.async_put(object_key, body, put_condition::absent(), std::move(handler));
    });
    ASSERT_FALSE(ec) << ec.message();
  }

  std::string key;
  std::string scratch;

 private:
  std::vector<cli_process> processes_;  // Never shrinks; references stay valid (reserve).
  std::map<std::string, std::string> saved_env_;

 public:
  CliIntegration() { processes_.reserve(64); }
};

/// Expects the process to have ended with `code` after writing exactly one line to stderr that
/// contains `text`.
inline void expect_one_line_error(const cli_process& process, int code, const std::string& text) {
  EXPECT_EQ(process.status, std::optional<int>(code)) << process.err();
  const auto lines = lines_of(process.err());
  EXPECT_EQ(lines.size(), 1u) << process.err();
  EXPECT_NE(process.err().find(text), std::string::npos) << process.err();
}

}  // namespace s3lect::test
