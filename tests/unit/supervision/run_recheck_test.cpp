// `s3lect run` starts its command only if it still leads with the elected term when it spawns:
// the "elected" notice can arrive after the leadership it announces has already ended.
#include "supervision/command_supervisor.hpp"
#include "supervision/job_guardian.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

s3lect::elector_config quick_config() {
  s3lect::elector_config config;
  config.lock_key = "recheck/leader.json";
  config.server_id = "node-a";
  config.server_address = "127.0.0.1:1";
  return config;  // Default timings: an absent lock is taken at once.
}

class RunRecheck : public ::testing::Test {
 protected:
  RunRecheck() {
    command.path = "/bin/true";
    command.argv = {"true"};
  }

  /// Runs until the elector leads; its lease.
  s3lect::leadership_lease elect() {
    election.start();
    std::optional<s3lect::leadership_lease> lease;
    election.async_wait_for_leadership(
        [&](boost::system::error_code ec, s3lect::leadership_lease got) {
          EXPECT_FALSE(ec) << ec.message();
          lease = got;
        });
    while (!lease && io.run_one_for(5s) != 0) {
    }
    EXPECT_TRUE(lease);
    return lease.value_or(s3lect::leadership_lease{});
  }

  s3lect::cli::supervisor make_supervisor() {
    // The guardian built in the build tree's bin/, beside s3lect.
    const auto guardian =
        std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin" /
        "s3lect-guardian";
    return s3lect::cli::supervisor{election, log,     options,
                                   command,  signals, {guardian.string(), {}}};
  }

  /// Starts the job as `s3lect run` does; its error.
  boost::system::error_code start(s3lect::cli::supervisor& s, s3lect::leadership_lease lease) {
    std::optional<boost::system::error_code> result;
    std::string step;
    asio::co_spawn(io, s3lect::cli::start_job(s, lease, step),
                   [&](std::exception_ptr, boost::system::error_code ec) { result = ec; });
    while (!result && io.run_one_for(5s) != 0) {
    }
    return result.value_or(make_error_code(boost::system::errc::timed_out));
  }

  asio::io_context io;
  std::shared_ptr<s3lect::memory_store> store = std::make_shared<s3lect::memory_store>();
  s3lect::memory_storage view{io.get_executor(), store};
  s3lect::elector election{io.get_executor(), view, quick_config()};
  s3lect::cli::log_output log{s3lect::cli::log_format::text, s3lect::log_level::error, {}};
  s3lect::cli::run_options options;
  s3lect::cli::spawn_request command;
  asio::signal_set caught{io};
  s3lect::cli::signal_inbox signals{caught};
};

TEST_F(RunRecheck, StartsTheCommandWhileStillLeading) {
  const auto lease = elect();
  auto s = make_supervisor();
  const auto error = start(s, lease);
  EXPECT_FALSE(error) << error.message();
  EXPECT_TRUE(s.job);
  EXPECT_GT(s.started.pid, 0);
}

TEST_F(RunRecheck, RefusesToStartOnceLeadershipEndedBeforeTheSpawn) {
  const auto lease = elect();
  bool resigned = false;
  election.async_resign([&](boost::system::error_code) { resigned = true; });
  while (!resigned && io.run_one_for(5s) != 0) {
  }
  ASSERT_FALSE(election.is_leader());
  auto s = make_supervisor();
  EXPECT_EQ(start(s, lease), s3lect::errc::not_leader);
  EXPECT_FALSE(s.job) << "a command was started without leadership";
}

TEST_F(RunRecheck, RefusesALeaseOfAnEarlierTermEvenWhileLeadingAgain) {
  auto lease = elect();
  lease.term -= 1;  // The notice of a previous leadership, delivered after a new one began.
  auto s = make_supervisor();
  EXPECT_EQ(start(s, lease), s3lect::errc::not_leader);
  EXPECT_FALSE(s.job);
}

}  // namespace
