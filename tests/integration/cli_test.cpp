// The s3lect tool against the local Ceph RADOS Gateway: argument errors and exit codes,
// `status`, `release`, and `run` supervising its command through handovers, stop signals,
// a frozen leader and a leader cut off from the store. Runs the built `s3lect` binary: the
// S3LECT_CLI variable names it, else it is found in the build tree's bin/ (<build>/bin/s3lect
// for <build>/tests/s3lect_integration_tests). Every wait is bounded; only processes this test
// started are signalled.
#include "support/cli_harness.hpp"
#include "support/tcp_forwarder.hpp"

#include <s3lect/version.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>

namespace s3lect {
namespace {

using test::cli_process;
using test::CliIntegration;
using test::eventually;
using test::expect_one_line_error;
using test::is_gone;
using test::job_marker;
using test::job_tree_command;
using test::json_number;
using test::lines_of;
using test::processes_with;
using test::read_file;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

TEST_F(CliIntegration, BadArgumentsExitTwoWithOneLine) {
  expect_one_line_error(run({}), 2, "usage: s3lect COMMAND");
  expect_one_line_error(run({"frobnicate"}), 2, "unknown command 'frobnicate'");
  expect_one_line_error(run({"run", "--lock", lock(), "--lease", "15", "--", "true"}), 2,
                        "--lease: expected a duration");
  expect_one_line_error(run({"run", "--lock", lock(), "--lease", "2s", "--renew-deadline", "1200ms",
                             "--frequent", "400ms", "--request-timeout", "150ms", "--retry-delays",
                             "50ms,200ms", "--kill-grace", "800ms", "--", "true"}),
                        2, "--kill-grace: must be less than lease - renew deadline (800 ms)");
  expect_one_line_error(run({"run", "--lock", lock(), "--lease", "2s", "--renew-deadline", "1200ms",
                             "--frequent", "400ms", "--request-timeout", "150ms", "--retry-delays",
                             "100ms,1s", "--kill-grace", "500ms", "--", "true"}),
                        2, "retry: the worst case of one request (1550 ms");
  expect_one_line_error(run({"run", "--lock", lock(), "--renew-deadline", "15s", "--", "true"}), 2,
                        "renew_deadline: must be less than lease (15000 ms), is 15000 ms");
  expect_one_line_error(run({"run", "--lock", lock(), "--peer-watch", "--", "true"}), 2,
                        "--peer-watch: needs --peer");
  expect_one_line_error(
      run({"run", "--lock", lock(), "--peer", "--peer-key", "k.pem", "--", "true"}), 2,
      "--peer-key: needs --peer-cert");
  expect_one_line_error(run({"run", "--lock", lock()}), 2, "missing the command");
  expect_one_line_error(run({"run", "--lock", "bucket-only", "--", "true"}), 2,
                        "expected s3://BUCKET/KEY");
  expect_one_line_error(run({"status"}), 2, "missing --lock");
  expect_one_line_error(run({"status", "--lock", lock(), "extra"}), 2, "unexpected argument");
  expect_one_line_error(run({"release", "--lock", lock(), "--if-term", "x"}), 2,
                        "--if-term: expected a term");
  expect_one_line_error(run({"release", "--lock", lock(), "--if-term", "-1"}), 2, "--if-term");
}

TEST_F(CliIntegration, VersionIsTheOneOfTheHeaders) {
  cli_process& process = run({"--version"});
  EXPECT_EQ(process.status, std::optional<int>(0)) << process.err();
  EXPECT_EQ(process.out(), "s3lect " S3LECT_VERSION_STRING "\n");
}

TEST_F(CliIntegration, MissingOrUnrunnableCommandExits127Or126) {
  auto args = run_args("nocommand");
  args.insert(args.end(), {"--", "s3lect-no-such-command"});
  expect_one_line_error(run(args), 127, "s3lect-no-such-command: command not found");
  const std::string plain = scratch + "/plain";
  std::ofstream(plain) << "echo hi\n";
  ::chmod(plain.c_str(), 0644);
  args = run_args("noexec");
  args.insert(args.end(), {"--", plain});
  expect_one_line_error(run(args), 126, "not an executable file");
}

TEST_F(CliIntegration, UnreachableOrRefusingStoreExitsFour) {
  auto unreachable = run_args("offline", "http://127.0.0.1:1");
  unreachable.insert(unreachable.end(), {"--", "true"});
  expect_one_line_error(run(unreachable), 4, "cannot read " + lock() + " at http://127.0.0.1:1");
  expect_one_line_error(run({"status", "--lock", lock(), "--endpoint", "http://127.0.0.1:1",
                             "--path-style", "--request-timeout", "200ms"}),
                        4, "connection failed");
  expect_one_line_error(run({"status", "--lock", "s3://s3lect-no-such-bucket/k", "--endpoint",
                             s3.http_endpoint, "--path-style"}),
                        4, "no such bucket");
  ::setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret", 1);
  expect_one_line_error(status(), 4, "signature does not match");
  expect_one_line_error(
      run({"release", "--lock", lock(), "--endpoint", s3.http_endpoint, "--path-style"}), 4,
      "cannot read");
}

TEST_F(CliIntegration, StatusErrorsShowAHostileKeyEscapedOnOneLine) {
  // A newline followed by a space once cut the message; quotes must not end the value either.
  const std::string hostile = "s3://s3lect-no-such-bucket/k\n evil=\"1\"";
  expect_one_line_error(run({"status", "--lock", hostile, "--endpoint", "http://127.0.0.1:1",
                             "--path-style", "--request-timeout", "200ms"}),
                        4, "cannot read \"s3://s3lect-no-such-bucket/k\\n evil=\\\"1\\\"\" at");
}

TEST_F(CliIntegration, StatusOfAMissingKeyExitsThree) {
  auto& process = status();
  expect_one_line_error(process, 3, "no lock record at " + lock());
  EXPECT_EQ(process.out(), "");
  std::vector<std::string> release_args{"release"};
  for (auto& arg : store_args()) release_args.push_back(arg);
  expect_one_line_error(run(release_args), 3, "nothing to release");
}

TEST_F(CliIntegration, StatusOfAMalformedRecordExitsSevenShowingWhatIsKnown) {
  put_raw(key, R"({"leaderID":"x","lastUpdated":"yesterday","term":1})");
  auto& process = status();
  expect_one_line_error(process, 7, "malformed lock record: lastUpdated");
  EXPECT_NE(process.out().find("\"error\":\"malformed lock record: lastUpdated"), std::string::npos)
      << process.out();
  EXPECT_NE(process.out().find("\"preview\":\"{\\\"leaderID\\\":\\\"x\\\""), std::string::npos)
      << process.out();
  EXPECT_NE(process.out().find("\"bodyBytes\":51,\"bodyTruncated\":false"), std::string::npos)
      << process.out();
  EXPECT_NE(process.out().find("\"etag\":\""), std::string::npos) << process.out();
  std::vector<std::string> release_args{"release"};
  for (auto& arg : store_args()) release_args.push_back(arg);
  expect_one_line_error(run(release_args), 7, "refusing to overwrite");
}

// An unreadable 20 MB object at the lock key once printed the first 1 MiB of it as a JSON string
// (a 6 MB line of \u0000): now a bounded, escaped preview and the size read.
TEST_F(CliIntegration, StatusOfAHugeUnreadableObjectShowsABoundedPreviewOnly) {
  put_raw(key, std::string(20 * 1024 * 1024, '\0'));
  auto& process = status();
  expect_one_line_error(process, 7, "malformed lock record");
  EXPECT_LT(process.out().size(), 2048u) << process.out().substr(0, 200);
  EXPECT_NE(process.out().find("\"bodyTruncated\":true"), std::string::npos)
      << process.out().substr(0, 400);
  EXPECT_NE(process.out().find("\"preview\":\"\\u0000\\u0000"), std::string::npos)
      << process.out().substr(0, 400);
}

TEST_F(CliIntegration, RunStartsTheCommandAsLeaderAndExitsWithItsStatusReleasingTheLock) {
  const std::string env_file = scratch + "/env";
  auto args = run_args("exit-seven");
  args.insert(args.end(),
              {"--", "sh", "-c",
               "echo \"$S3LECT_TERM $S3LECT_LEADER_ID $S3LECT_LOCK\" > " + env_file + "; exit 7"});
  auto& process = run(args);
  EXPECT_EQ(process.status, std::optional<int>(7)) << process.err();
  std::istringstream env(read_file(env_file));
  long long term = 0;
  std::string id, lock_url;
  ASSERT_TRUE(env >> term >> id >> lock_url) << read_file(env_file);
  EXPECT_GE(term, 1);
  EXPECT_EQ(id, "exit-seven");
  EXPECT_EQ(lock_url, lock());
  EXPECT_NE(process.err().find("msg=\"became leader\" term=" + std::to_string(term)),
            std::string::npos)
      << process.err();
  EXPECT_NE(process.err().find("msg=\"command exited\""), std::string::npos) << process.err();

  auto& after = status();
  EXPECT_EQ(after.status, std::optional<int>(0)) << after.err();
  const std::string json = after.out();
  EXPECT_NE(json.find("\"released\":true"), std::string::npos) << json;
  EXPECT_EQ(json_number(json, "term"), term) << json;
  EXPECT_NE(json.find("\"leaderID\":\"exit-seven\""), std::string::npos) << json;
}

TEST_F(CliIntegration, CommandKilledBySignalGives128PlusTheSignal) {
  auto args = run_args("self-kill");
  args.insert(args.end(), {"--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(run(args).status, std::optional<int>(128 + SIGKILL));
}

TEST_F(CliIntegration, StatusPrintsTheRecordOfARunningLeader) {
  const std::string marker = scratch + "/started";
  auto args = run_args("status-leader");
  args.insert(args.end(), {"--addr", "127.0.0.1:9443", "--log-format", "json", "--", "sh", "-c",
                           "touch " + marker + "; exec sleep 60"});
  auto& leader = start(args);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(marker); }, 15s)) << leader.err();
  auto& process = status();
  ASSERT_EQ(process.status, std::optional<int>(0)) << process.err();
  const std::string json = process.out();
  EXPECT_EQ(lines_of(json).size(), 1u) << json;
  EXPECT_EQ(json.front(), '{');
  for (const char* part :
       {"\"lock\":\"s3://", "\"etag\":\"", "\"leaderID\":\"status-leader\"",
        "\"leaderAddr\":\"127.0.0.1:9443\"", "\"lastUpdated\":\"20", "\"leaseMs\":2000",
        "\"released\":false", "\"nonce\":\"", "\"expired\":false"}) {
    EXPECT_NE(json.find(part), std::string::npos) << part << " in " << json;
  }
  EXPECT_GE(json_number(json, "term").value_or(0), 1);
  const auto age = json_number(json, "ageMs");
  ASSERT_TRUE(age) << json;
  EXPECT_LT(*age, 2000) << json;

  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s));
  EXPECT_EQ(leader.status, std::optional<int>(0)) << leader.err();
  // JSON log lines, each a leadership event with its fields.
  const std::string log = leader.err();
  EXPECT_NE(log.find("{\"time\":\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"msg\":\"became leader\",\"term\":"), std::string::npos) << log;
  EXPECT_NE(log.find("\"lock\":\"" + lock() + "\",\"id\":\"status-leader\"}"), std::string::npos)
      << log;
  for (const auto& line : lines_of(log)) EXPECT_EQ(line.front(), '{') << line;
}

TEST_F(CliIntegration, StopSignalStopsTheCommandAndReleasesTheLock) {
  const std::string events = scratch + "/events";
  auto args = run_args("stopped-by-term");
  args.insert(args.end(), {"--", "sh", "-c",
                           "trap 'echo got-term >> " + events + "; exit 0' TERM; echo started >> " +
                               events + "; while :; do sleep 0.05; done"});
  auto& leader = start(args);
  ASSERT_TRUE(
      eventually([&] { return read_file(events).find("started") != std::string::npos; }, 15s))
      << leader.err();
  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s)) << leader.err();
  EXPECT_EQ(leader.status, std::optional<int>(0)) << leader.err();
  EXPECT_NE(read_file(events).find("got-term"), std::string::npos) << leader.err();
  auto& after = status();
  EXPECT_NE(after.out().find("\"released\":true"), std::string::npos) << after.out();
}

TEST_F(CliIntegration, FollowerStartsItsCommandOnlyAfterTakingOver) {
  const std::string first_marker = scratch + "/first";
  const std::string second_marker = scratch + "/second";
  auto first_args = run_args("first");
  first_args.insert(first_args.end(),
                    {"--", "sh", "-c", "echo $S3LECT_TERM > " + first_marker + "; exec sleep 60"});
  auto& first = start(first_args);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(first_marker); }, 15s))
      << first.err();
  auto second_args = run_args("second");
  second_args.insert(
      second_args.end(),
      {"--", "sh", "-c", "echo $S3LECT_TERM > " + second_marker + "; exec sleep 60"});
  auto& second = start(second_args);
  // Two leases: the follower sees a healthy leader all along and must not start its command.
  std::this_thread::sleep_for(4s);
  EXPECT_FALSE(std::filesystem::exists(second_marker)) << second.err();
  EXPECT_NE(second.err().find("msg=\"leader changed\" holder=first"), std::string::npos)
      << second.err();

  ::kill(first.pid, SIGTERM);  // Graceful: releases, so the follower takes over at once.
  ASSERT_TRUE(first.wait(10s));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(second_marker); }, 5s))
      << second.err();
  long long first_term = 0, second_term = 0;
  std::istringstream(read_file(first_marker)) >> first_term;
  ASSERT_TRUE(eventually(
      [&] {
        return static_cast<bool>(std::istringstream(read_file(second_marker)) >> second_term);
      },
      2s));
  EXPECT_EQ(second_term, first_term + 1);
  ::kill(second.pid, SIGTERM);
  ASSERT_TRUE(second.wait(10s));
  EXPECT_EQ(second.status, std::optional<int>(0)) << second.err();
}

/// A command that appends "start TERM NS" and, on SIGTERM, "end TERM NS" to `file`.
std::string journaling_command(const std::string& file) {
  return "echo \"start $S3LECT_TERM $(date +%s%N)\" >> " + file +
         "; trap 'echo \"end $S3LECT_TERM $(date +%s%N)\" >> " + file +
         "; exit 0' TERM; while :; do sleep 0.05; done";
}

struct journal_entry {
  std::string kind;
  long long term = 0;
  long long ns = 0;
};

std::vector<journal_entry> read_journal(const std::string& file) {
  std::vector<journal_entry> entries;
  for (const auto& line : lines_of(read_file(file))) {
    journal_entry entry;
    if (std::istringstream(line) >> entry.kind >> entry.term >> entry.ns) entries.push_back(entry);
  }
  return entries;
}

/// Checks that the commands' lifetimes never overlapped: in time order, every start follows the
/// end of the previous term's command, and terms increase.
void expect_no_overlap(const std::string& file) {
  auto entries = read_journal(file);
  std::sort(entries.begin(), entries.end(),
            [](const journal_entry& a, const journal_entry& b) { return a.ns < b.ns; });
  std::optional<long long> running;
  long long last_term = 0;
  std::string timeline;
  for (const auto& entry : entries) {
    timeline +=
        entry.kind + " " + std::to_string(entry.term) + " " + std::to_string(entry.ns) + "\n";
  }
  for (const auto& entry : entries) {
    if (entry.kind == "start") {
      EXPECT_FALSE(running) << "term " << entry.term << " started while term " << *running
                            << " ran:\n"
                            << timeline;
      EXPECT_GT(entry.term, last_term) << timeline;
      running = entry.term;
      last_term = entry.term;
    } else {
      EXPECT_EQ(running, std::optional<long long>(entry.term)) << timeline;
      running.reset();
    }
  }
}

/// Term of the most recent "start" in the journal, 0 if none.
long long latest_start(const std::string& file) {
  long long term = 0;
  for (const auto& entry : read_journal(file)) {
    if (entry.kind == "start") term = std::max(term, entry.term);
  }
  return term;
}

/// Freezes `pid` (SIGSTOP) right after one of its renewals lands, and returns when it froze.
/// `read_etag` reads the lock object's ETag, new with every write. A renewal seen between two
/// reads was issued no later than the freeze, and at most 100 ms (plus its own round trip)
/// before it when the freeze comes within 100 ms of the start of the read that did not see it
/// yet. Then the next renewal, 0.4 s later, has not been issued: nothing the leader sent before
/// the freeze can land after it. A freeze that came later is undone at once (far from the renew
/// deadline) and tried again. (The record's lastUpdated cannot serve as the renewal's time: it
/// is on the leader's estimate of the store's clock, which may be off this machine's by the
/// estimate's error, hundreds of milliseconds.)
std::optional<steady::time_point> freeze_after_renewal(
    pid_t pid, const std::function<std::string()>& read_etag) {
  auto previous_started = steady::now();
  std::string previous = read_etag();
  for (int read = 0; read < 2000; ++read) {
    const auto started = steady::now();
    const std::string current = read_etag();
    if (!previous.empty() && !current.empty() && current != previous) {
      ::kill(pid, SIGSTOP);
      const auto frozen_at = steady::now();
      if (frozen_at - previous_started < 100ms) return frozen_at;
      ::kill(pid, SIGCONT);
    }
    previous = current;
    previous_started = started;
  }
  return std::nullopt;
}

TEST_F(CliIntegration, FrozenS3lectsGuardianStopsTheJobAtTheRenewDeadline) {
  const std::string journal = scratch + "/journal";
  boost::asio::io_context io;
  s3_client reader(io.get_executor(), s3.config(false));
  const auto read_etag = [&] {
    auto [ec, read] = test::run_until_complete<get_result>(
        io, [&](auto handler) { reader.async_get(key, std::move(handler)); });
    return !ec && read.found ? read.found->etag : std::string();
  };
  std::vector<cli_process*> nodes;
  for (int i = 0; i < 3; ++i) {
    auto args = run_args("frozen-" + std::to_string(i));
    args.insert(args.end(), {"--", "sh", "-c", journaling_command(journal)});
    nodes.push_back(&start(args));
    if (i == 0) {
      ASSERT_TRUE(eventually([&] { return latest_start(journal) > 0; }, 15s)) << nodes[0]->err();
    }
  }
  for (int round = 0; round < 2; ++round) {
    const long long term = latest_start(journal);
    auto& current = status();
    ASSERT_EQ(json_number(current.out(), "term"), term) << current.out();
    cli_process* leader = nullptr;
    for (int i = 0; i < 3; ++i) {
      if (current.out().find("\"leaderID\":\"frozen-" + std::to_string(i) + "\"") !=
          std::string::npos) {
        leader = nodes[static_cast<std::size_t>(i)];
      }
    }
    ASSERT_NE(leader, nullptr) << current.out();
    // s3lect alone (not its job) frozen just after a renewal until past its renew deadline
    // (1.2 s) after it, and 0.5 s short of the lease (2 s) after which a follower may take over:
    // its guardian must stop the job by itself, at that deadline, while s3lect is still frozen.
    const auto frozen_at = freeze_after_renewal(leader->pid, read_etag);
    ASSERT_TRUE(frozen_at) << "no renewal seen just before a freeze";
    std::this_thread::sleep_until(*frozen_at + 1400ms);
    const long long thawed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    ::kill(leader->pid, SIGCONT);
    ASSERT_TRUE(eventually([&] { return latest_start(journal) > term; }, 15s))
        << leader->err() << read_file(journal);
    std::optional<long long> ended_ns;
    for (const auto& entry : read_journal(journal)) {
      if (entry.kind == "end" && entry.term == term) ended_ns = entry.ns;
    }
    ASSERT_TRUE(ended_ns) << read_file(journal);
    EXPECT_LT(*ended_ns, thawed_ns) << "the job ran on while s3lect was frozen";
    EXPECT_NE(leader->err().find("msg=\"leadership not confirmed in time: stopping the job\" "
                                 "term=" +
                                 std::to_string(term)),
              std::string::npos)
        << leader->err();
  }
  for (auto* node : nodes) ::kill(node->pid, SIGTERM);
  for (auto* node : nodes) {
    ASSERT_TRUE(node->wait(10s));
    EXPECT_EQ(node->status, std::optional<int>(0)) << node->err();
  }
  expect_no_overlap(journal);
  EXPECT_GE(read_journal(journal).size(), 6u) << read_file(journal);
}

TEST_F(CliIntegration, LeaderCutOffFromTheStoreStopsItsCommandBeforeAnotherStarts) {
  const std::string journal = scratch + "/journal";
  const auto port_at = s3.http_endpoint.rfind(':');
  test::tcp_forwarder cable(
      "127.0.0.1", static_cast<std::uint16_t>(std::stoi(s3.http_endpoint.substr(port_at + 1))));
  auto leader_args = run_args("cut-off", "http://127.0.0.1:" + std::to_string(cable.port()));
  leader_args.insert(leader_args.end(), {"--", "sh", "-c", journaling_command(journal)});
  auto& leader = start(leader_args);
  ASSERT_TRUE(eventually([&] { return latest_start(journal) > 0; }, 15s)) << leader.err();
  const long long term = latest_start(journal);
  std::vector<cli_process*> followers;
  for (int i = 0; i < 2; ++i) {
    auto args = run_args("connected-" + std::to_string(i));
    args.insert(args.end(), {"--", "sh", "-c", journaling_command(journal)});
    followers.push_back(&start(args));
  }
  std::this_thread::sleep_for(1s);
  cable.stop();  // The leader can no longer renew; it must step down at its renew deadline.
  ASSERT_TRUE(eventually([&] { return latest_start(journal) > term; }, 15s))
      << leader.err() << read_file(journal);
  EXPECT_NE(leader.err().find("msg=\"lost leadership\" term=" + std::to_string(term)),
            std::string::npos)
      << leader.err();
  for (auto* node : followers) ::kill(node->pid, SIGTERM);
  ::kill(leader.pid, SIGTERM);
  for (auto* node : followers) ASSERT_TRUE(node->wait(10s));
  ASSERT_TRUE(leader.wait(10s));
  expect_no_overlap(journal);
}

// A fleet started while the store is down (or before DNS or the network is up) waits for it with
// --wait-for-store instead of exiting 4 and relying on a supervisor's restarts.
TEST_F(CliIntegration, WaitForStoreWaitsForAStoreThatIsNotThereYet) {
  // A loopback port with nothing behind it, for now: connections are refused.
  std::uint16_t port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  const std::string journal = scratch + "/journal";
  auto args = run_args("patient", "http://127.0.0.1:" + std::to_string(port));
  args.insert(args.end(), {"--wait-for-store", "--", "sh", "-c", journaling_command(journal)});
  auto& node = start(args);
  ASSERT_TRUE(eventually(
      [&] {
        const std::string err = node.err();
        std::size_t waits = 0;
        for (std::size_t at = err.find("waiting for the store"); at != std::string::npos;
             at = err.find("waiting for the store", at + 1)) {
          ++waits;
        }
        return waits >= 2;  // It retries, it does not exit.
      },
      15s))
      << node.err();
  EXPECT_FALSE(node.status.has_value()) << node.err();
  EXPECT_NE(node.err().find("Connection refused"), std::string::npos) << node.err();
  EXPECT_EQ(latest_start(journal), 0) << "no command before the store was read";

  const auto port_at = s3.http_endpoint.rfind(':');
  test::tcp_forwarder store(
      "127.0.0.1", static_cast<std::uint16_t>(std::stoi(s3.http_endpoint.substr(port_at + 1))),
      "127.0.0.1", port);
  ASSERT_TRUE(eventually([&] { return latest_start(journal) > 0; }, 15s)) << node.err();
  EXPECT_NE(node.err().find("msg=\"store reachable\" waited_ms="), std::string::npos) << node.err();
  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(node.wait(10s)) << node.err();
  EXPECT_EQ(node.status, std::optional<int>(0)) << node.err();
}

TEST_F(CliIntegration, WaitForStoreEndsOnAStopSignalOrWhenTheStoreRefusesUs) {
  const std::string started = scratch + "/started";
  auto args = run_args("stopped-while-waiting", "http://127.0.0.1:1");
  args.insert(args.end(), {"--wait-for-store", "--", "touch", started});
  auto& waiting = start(args);
  ASSERT_TRUE(eventually(
      [&] { return waiting.err().find("waiting for the store") != std::string::npos; }, 15s))
      << waiting.err();
  ::kill(waiting.pid, SIGTERM);
  ASSERT_TRUE(waiting.wait(10s)) << waiting.err();
  EXPECT_EQ(waiting.status, std::optional<int>(0)) << waiting.err();
  EXPECT_NE(waiting.err().find("msg=\"stopped while waiting for the store\" signal=SIGTERM"),
            std::string::npos)
      << waiting.err();
  EXPECT_FALSE(std::filesystem::exists(started));

  // A missing bucket is not something waiting fixes.
  args = {"run",
          "--lock",
          "s3://s3lect-no-such-bucket/k",
          "--endpoint",
          s3.http_endpoint,
          "--path-style",
          "--wait-for-store",
          "--",
          "touch",
          started};
  const auto begun = steady::now();
  expect_one_line_error(run(args), 4, "no such bucket");
  EXPECT_LT(steady::now() - begun, 10s);
  EXPECT_FALSE(std::filesystem::exists(started));
}

TEST_F(CliIntegration, ReleaseChecksTheTermAndMarksTheRecordReleased) {
  const std::string marker = job_marker();
  auto args = run_args("crashed");
  args.insert(args.end(), {"--", "sh", "-c", job_tree_command(marker)});
  auto& crashed = start(args);
  ASSERT_TRUE(eventually([&] { return processes_with(marker) == 3; }, 15s)) << crashed.err();
  // s3lect and its guardian die without releasing; the job must die with them.
  crash_node(crashed);
  ASSERT_TRUE(crashed.wait(10s));
  EXPECT_TRUE(eventually([&] { return processes_with(marker) == 0; }, 5s))
      << "the job outlived s3lect and its guardian";

  auto& held = status();
  ASSERT_EQ(held.status, std::optional<int>(0)) << held.err();
  EXPECT_NE(held.out().find("\"released\":false"), std::string::npos) << held.out();
  const auto term = json_number(held.out(), "term");
  ASSERT_TRUE(term);

  std::vector<std::string> release_args{"release"};
  for (auto& arg : store_args()) release_args.push_back(arg);
  auto mismatch = release_args;
  mismatch.insert(mismatch.end(), {"--if-term", std::to_string(*term + 1)});
  expect_one_line_error(
      run(mismatch), 6,
      "its term is " + std::to_string(*term) + ", not " + std::to_string(*term + 1));
  EXPECT_NE(status().out().find("\"released\":false"), std::string::npos);

  auto matching = release_args;
  matching.insert(matching.end(), {"--if-term", std::to_string(*term)});
  auto& released = run(matching);
  EXPECT_EQ(released.status, std::optional<int>(0)) << released.err();
  EXPECT_NE(released.out().find("released " + lock()), std::string::npos) << released.out();
  auto& after = status();
  EXPECT_NE(after.out().find("\"released\":true"), std::string::npos) << after.out();
  EXPECT_EQ(json_number(after.out(), "term"), term) << after.out();
  EXPECT_NE(after.out().find("\"leaderID\":\"crashed\""), std::string::npos) << after.out();

  auto& again = run(release_args);
  EXPECT_EQ(again.status, std::optional<int>(0)) << again.err();
  EXPECT_NE(again.out().find("already released"), std::string::npos) << again.out();
}

TEST_F(CliIntegration, ForcedReleaseHandsOverFromALiveLeader) {
  const std::string journal = scratch + "/journal";
  std::vector<cli_process*> nodes;
  for (int i = 0; i < 2; ++i) {
    auto args = run_args("live-" + std::to_string(i));
    args.insert(args.end(), {"--", "sh", "-c", journaling_command(journal)});
    nodes.push_back(&start(args));
    if (i == 0) {
      ASSERT_TRUE(eventually([&] { return latest_start(journal) > 0; }, 15s)) << nodes[0]->err();
    }
  }
  const long long term = latest_start(journal);
  std::vector<std::string> release_args{"release"};
  for (auto& arg : store_args()) release_args.push_back(arg);
  release_args.insert(release_args.end(), {"--if-term", std::to_string(term)});
  auto& released = run(release_args);
  // A renewal may win the race between the read and the write: then the record is unchanged.
  ASSERT_TRUE(released.status == 0 || released.status == 8) << released.err();
  if (released.status == 0) {
    EXPECT_TRUE(eventually([&] { return latest_start(journal) > term; }, 10s))
        << read_file(journal) << nodes[0]->err();
  } else {
    EXPECT_NE(released.err().find("changed between reading and releasing"), std::string::npos);
  }
  for (auto* node : nodes) ::kill(node->pid, SIGTERM);
  for (auto* node : nodes) ASSERT_TRUE(node->wait(10s));
  // The old holder learns of the release only at its next renewal: its command and the new
  // leader's may overlap by up to a renewal interval, which is why the term is passed on.
  for (const auto& entry : read_journal(journal)) EXPECT_GE(entry.term, term);
}

}  // namespace
}  // namespace s3lect
