// `s3lect run` keeps its credentials out of core dumps (docs/operations.md#core-dumps): a crash
// with `ulimit -c unlimited` writes no core by default, and a core holding the secret key with
// --allow-core-dumps, which shows the test would see one. Needs cores written as files (a
// core_pattern that is not a pipe to a handler).
#include "support/cli_harness.hpp"

#include <sys/resource.h>

#include <filesystem>

namespace s3lect {
namespace {

using test::CliIntegration;
using namespace std::chrono_literals;

// The s3lect under test is built like this test. A sanitizer runtime catches SIGSEGV itself
// (ASan and TSan report and abort: exit 134, not a death by the signal) and keeps cores from
// being written (ASan's disable_coredump) or makes them terabytes of shadow (TSan): neither
// half of the test means anything there. It runs in plain builds (`ctest --preset debug`).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized_build = true;
#else
constexpr bool sanitized_build = false;
#endif
#else
constexpr bool sanitized_build = false;
#endif

/// RLIMIT_CORE raised as far as allowed and the working directory set to `directory` (where a
/// relative core_pattern puts cores), both inherited by the processes started meanwhile; the
/// test process gets both back at the end of the scope.
class core_dump_scope {
 public:
  explicit core_dump_scope(const std::string& directory)
      : saved_directory_(std::filesystem::current_path()) {
    ::getrlimit(RLIMIT_CORE, &saved_limit_);
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_CORE, &unlimited) != 0) {
      unlimited.rlim_cur = saved_limit_.rlim_max;
      unlimited.rlim_max = saved_limit_.rlim_max;
      ::setrlimit(RLIMIT_CORE, &unlimited);
    }
    std::filesystem::current_path(directory);
  }
  ~core_dump_scope() {
    std::filesystem::current_path(saved_directory_);
    ::setrlimit(RLIMIT_CORE, &saved_limit_);
  }
  core_dump_scope(const core_dump_scope&) = delete;
  core_dump_scope& operator=(const core_dump_scope&) = delete;

 private:
  std::filesystem::path saved_directory_;
  rlimit saved_limit_{};
};

/// Files in `directory` and how many of them hold `secret`.
std::pair<std::size_t, std::size_t> files_holding(const std::string& directory,
                                                  const std::string& secret) {
  std::size_t files = 0, holding = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    ++files;
    if (test::read_file(entry.path().string()).find(secret) != std::string::npos) ++holding;
  }
  return {files, holding};
}

TEST_F(CliIntegration, ACrashOfRunLeavesNoCoreHoldingTheSecretKey) {
  if (sanitized_build) GTEST_SKIP() << "a sanitizer runtime handles SIGSEGV and core dumps itself";
  const std::string pattern = test::read_file("/proc/sys/kernel/core_pattern");
  if (pattern.empty() || pattern.front() == '|' || pattern.front() == '/') {
    GTEST_SKIP() << "cores go to a handler or a fixed place, not the working directory: "
                 << pattern;
  }
  for (const bool allow : {false, true}) {
    SCOPED_TRACE(allow ? "--allow-core-dumps" : "default");
    const std::string directory = scratch + (allow ? "/allowed" : "/default");
    std::filesystem::create_directories(directory);
    std::vector<std::string> args = run_args(allow ? "core-allowed" : "core-default");
    if (allow) args.push_back("--allow-core-dumps");
    for (const char* arg : {"--", "sleep", "30"}) args.push_back(arg);
    test::cli_process* process = nullptr;
    {
      const core_dump_scope cores(directory);
      process = &start(args);
    }
    ASSERT_TRUE(test::eventually(
        [&] { return process->err().find("command started") != std::string::npos; }, 15s))
        << process->err();
    ::kill(process->pid, SIGSEGV);
    EXPECT_EQ(process->wait(20s), std::optional<int>(128 + SIGSEGV)) << process->err();
    const auto [files, holding] = files_holding(directory, s3.secret_key);
    if (allow) {
      EXPECT_GE(holding, 1u) << "no core with the key: the test cannot see cores here";
    } else {
      EXPECT_EQ(files, 0u) << "a core was written";
      EXPECT_EQ(holding, 0u);
    }
  }
}

}  // namespace
}  // namespace s3lect
