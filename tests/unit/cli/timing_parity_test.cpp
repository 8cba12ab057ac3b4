// `s3lect run` derives its timing with the library: the elector_config its option parser
// builds has the timing of elector_config::apply_timing() given the same settings, and its
// default kill grace is the library's stop_grace().
#include "cli/run.hpp"

#include <s3lect/config.hpp>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

/// One combination: the options given and the same settings for the library.
struct timing_case {
  std::vector<std::string> options;
  s3lect::elector_timing given;
};

std::vector<timing_case> cases() {
  std::vector<timing_case> all;
  for (const auto& [lease, lease_text, deadline, deadline_text] :
       std::vector<std::tuple<milliseconds, std::string, milliseconds, std::string>>{
           {2s, "2s", 1500ms, "1500ms"}, {15s, "15s", 12s, "12s"}, {2min, "2m", 90s, "90s"}}) {
    timing_case alone{{"--lease", lease_text}, {}};
    alone.given.lease = lease;
    all.push_back(alone);
    timing_case with_deadline{{"--lease", lease_text, "--renew-deadline", deadline_text}, {}};
    with_deadline.given.lease = lease;
    with_deadline.given.renew_deadline = deadline;
    all.push_back(with_deadline);
  }
  return all;
}

/// Sets an environment variable for the life of the object, then restores it.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    ::setenv(name, value, 1);
  }
  ~scoped_env() {
    if (saved_) {
      ::setenv(name_, saved_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

/// The settings `s3lect run` parses from `options`; fails the test when it refuses them.
std::optional<s3lect::cli::run_options> parse(const std::vector<std::string>& options) {
  std::vector<std::string> args{"--lock", "s3://bucket/group/leader.json", "--endpoint",
                                "http://127.0.0.1:1"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", "true"});
  const scoped_env key_id("AWS_ACCESS_KEY_ID", "test-key");
  const scoped_env secret("AWS_SECRET_ACCESS_KEY", "test-secret");
  std::string error;
  auto parsed = s3lect::cli::parse_run_options(args, error);
  EXPECT_TRUE(parsed) << error;
  return parsed;
}

TEST(TimingParity, TheCliDerivesWhatTheLibraryDerives) {
  for (const timing_case& c : cases()) {
    const std::string name = testing::PrintToString(c.options);
    const auto options = parse(c.options);
    ASSERT_TRUE(options) << name;
    const s3lect::elector_config& cli = options->elector.config;
    s3lect::elector_config library;
    library.apply_timing(c.given);
    library.lock_key = cli.lock_key;
    library.server_id = cli.server_id;
    EXPECT_EQ(library.validate(), std::nullopt) << name;
    EXPECT_EQ(cli.lease, library.lease) << name;
    EXPECT_EQ(cli.renew_deadline, library.renew_deadline) << name;
    EXPECT_EQ(cli.frequent_interval, library.frequent_interval) << name;
    EXPECT_EQ(cli.infrequent_interval, library.infrequent_interval) << name;
    EXPECT_EQ(cli.request_timeout, library.request_timeout) << name;
    EXPECT_EQ(cli.retry.delays, library.retry.delays) << name;
    EXPECT_EQ(cli.peer.timeout, library.peer.timeout) << name;
    EXPECT_EQ(cli.max_clock_skew, library.max_clock_skew) << name;
    EXPECT_EQ(cli.acquire_grace, library.acquire_grace) << name;
    EXPECT_EQ(options->kill_grace, library.stop_grace()) << name;
    EXPECT_EQ(options->store.config.request_timeout, library.request_timeout) << name;
  }
}

}  // namespace
