// What a new user meets in the first hour (issue 25), each against the built `s3lect`: one
// exit-code table in every --help, a missing or non-PEM --ca-file as a usage error, store
// failures of `put` and `get` as exit 4, a server that is not S3 refused by `status`, `check`
// and `run`, the listeners up before the store answers, the shortest lease, terms out of range,
// durations as written, and the messages of `get`, `status` and `run --slots`.
#include "support/cli_harness.hpp"
#include "support/scripted_http_server.hpp"

#include <boost/asio/ip/tcp.hpp>

namespace s3lect::test {
namespace {

/// The table, as the top-level help prints it.
std::string exit_table_of(const std::string& help) {
  const auto start = help.find("exit codes (the same for every command):");
  return start == std::string::npos ? std::string() : help.substr(start);
}

/// The status line of an HTTP GET of `path` on 127.0.0.1:`port`, or "" when nothing answers.
std::string http_status_line(unsigned short port, const std::string& path) {
  boost::asio::ip::tcp::iostream stream;
  stream.expires_after(5s);
  stream.connect("127.0.0.1", std::to_string(port));
  if (!stream) return {};
  stream << "GET " << path << " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
         << std::flush;
  std::string line;
  std::getline(stream, line);
  return line;
}

/// A loopback port nothing listens on now.
unsigned short free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

class CliFirstHour : public CliIntegration {
 protected:
  std::string object() const { return "s3://" + s3.bucket + "/" + key + ".object"; }

  /// The store options of `put` and `get` (no --lock) for `endpoint`.
  std::vector<std::string> object_store_args(const std::string& endpoint) const {
    return {"--endpoint", endpoint, "--path-style", "--request-timeout", "300ms"};
  }

  std::string file_with(const std::string& name, const std::string& content) const {
    const std::string path = scratch + "/" + name;
    std::ofstream(path) << content;
    return path;
  }
};

TEST_F(CliFirstHour, EveryHelpPrintsTheSameExitCodeTableAndMinusHWorks) {
  const cli_process& top = run({"--help"});
  const std::string table = exit_table_of(top.out());
  ASSERT_FALSE(table.empty()) << top.out();
  EXPECT_NE(table.find("  4    the store is unreachable"), std::string::npos);
  for (const char* command : {"run", "status", "release", "check", "put", "get"}) {
    for (const char* help : {"--help", "-h"}) {
      const cli_process& process = run({command, help});
      EXPECT_EQ(process.status, std::optional<int>(0)) << command << " " << help << process.err();
      EXPECT_EQ(exit_table_of(process.out()), table) << command << " " << help;
    }
  }
}

TEST_F(CliFirstHour, AMissingOrNonPemCaFileIsAUsageErrorNamingTheOption) {
  const std::string not_pem = file_with("not.pem", "hello\n");
  const std::string https = "https://127.0.0.1:" + std::to_string(free_port());
  const std::vector<std::vector<std::string>> commands{{"status", "--lock", lock()},
                                                       {"release", "--lock", lock()},
                                                       {"check", "--lock", lock()},
                                                       {"put", "--term", "1", object()},
                                                       {"get", object()},
                                                       {"run", "--lock", lock(), "--", "true"}};
  for (const std::string& ca_file : {scratch + "/absent.pem", not_pem}) {
    for (auto args : commands) {
      const auto at = std::find(args.begin(), args.end(), "--") - args.begin();
      args.insert(args.begin() + at, {"--ca-file", ca_file, "--endpoint", https});
      const cli_process& process = run(args);
      expect_one_line_error(process, 2, "--ca-file: cannot load '" + ca_file + "'");
      EXPECT_EQ(process.err().find("[s3lect:"), std::string::npos) << process.err();
    }
  }
}

TEST_F(CliFirstHour, PutAndGetOfAnUnreachableOrRefusingStoreExitFour) {
  const std::string body = file_with("body", "x");
  const std::string unreachable = "http://127.0.0.1:" + std::to_string(free_port());
  std::vector<std::string> put_unreachable{"put", "--term", "1", "--file", body};
  for (auto& arg : object_store_args(unreachable)) put_unreachable.push_back(arg);
  put_unreachable.push_back(object());
  expect_one_line_error(run(put_unreachable), 4, "cannot write");
  std::vector<std::string> get_unreachable{"get"};
  for (auto& arg : object_store_args(unreachable)) get_unreachable.push_back(arg);
  get_unreachable.push_back(object());
  expect_one_line_error(run(get_unreachable), 4, "cannot read");

  ::setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
  expect_one_line_error(run({"put", "--term", "1", "--file", body, "--endpoint", s3.http_endpoint,
                             "--path-style", object()}),
                        4, "signature");
  expect_one_line_error(run({"get", "--endpoint", s3.http_endpoint, "--path-style", object()}), 4,
                        "signature");
  ::setenv("AWS_SECRET_ACCESS_KEY", s3.secret_key.c_str(), 1);
  expect_one_line_error(run({"get", "--endpoint", s3.http_endpoint, "--path-style", object()}), 3,
                        "no object");
}

TEST_F(CliFirstHour, AServerThatAnswersBareNotFoundIsNotAnEmptyLock) {
  scripted_http_server web_server(
      [](const recorded_request&) { return http_reply(404, "Not Found\n"); });
  const std::string endpoint = web_server.endpoint();
  expect_one_line_error(run({"status", "--lock", lock(), "--endpoint", endpoint, "--path-style"}),
                        4, "does not answer like S3");

  const auto started = steady::now();
  auto args = run_args("not-s3", endpoint);
  args.insert(args.end(), {"--", "true"});
  const cli_process& campaign = run(args);
  EXPECT_EQ(campaign.status, std::optional<int>(4)) << campaign.err();
  EXPECT_NE(campaign.err().find("does not answer like S3"), std::string::npos) << campaign.err();
  EXPECT_EQ(campaign.err().find("write outcome unknown"), std::string::npos) << campaign.err();
  EXPECT_LT(steady::now() - started, 10s);

  const cli_process& check = run(
      {"check", "--lock", lock(), "--endpoint", endpoint, "--path-style", "--race-rounds", "0"});
  EXPECT_EQ(check.status, std::optional<int>(4)) << check.out() << check.err();
  EXPECT_NE(check.err().find("does not answer like S3"), std::string::npos) << check.err();
}

TEST_F(CliFirstHour, MetricsAnswerWhileWaitingForTheStoreAndABusyPortFailsAtOnce) {
  const unsigned short metrics_port = free_port();
  const std::string unreachable = "http://127.0.0.1:" + std::to_string(free_port());
  auto waiting_args = run_args("waiting", unreachable);
  waiting_args.insert(waiting_args.end(),
                      {"--wait-for-store", "--metrics-listen",
                       "127.0.0.1:" + std::to_string(metrics_port), "--", "true"});
  cli_process& waiting = start(waiting_args);
  const auto healthz_answers_while_waiting = [&] {
    return waiting.err().find("waiting for the store") != std::string::npos &&
           http_status_line(metrics_port, "/healthz").find(" 200 ") != std::string::npos;
  };
  EXPECT_TRUE(eventually(healthz_answers_while_waiting, 10s)) << waiting.err();
  ::kill(waiting.pid, SIGTERM);
  ASSERT_TRUE(waiting.wait(10s));
  EXPECT_EQ(waiting.status, std::optional<int>(0)) << waiting.err();

  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor busy(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  for (const bool wait_for_store : {false, true}) {
    auto args = run_args("busy", unreachable);
    if (wait_for_store) args.push_back("--wait-for-store");
    args.insert(args.end(),
                {"--metrics-listen", "127.0.0.1:" + std::to_string(busy.local_endpoint().port()),
                 "--", "true"});
    const auto started = steady::now();
    const cli_process& refused = run(args);
    EXPECT_EQ(refused.status, std::optional<int>(9)) << refused.err();
    EXPECT_NE(refused.err().find("s3lect run: --metrics-listen: cannot listen"), std::string::npos)
        << refused.err();
    EXPECT_EQ(refused.err().find("waiting for the store"), std::string::npos) << refused.err();
    EXPECT_LT(steady::now() - started, 5s) << "before any store request";
  }
}

TEST_F(CliFirstHour, TheShortestLeaseAndTermsOutOfRangeNameTheOptionGiven) {
  expect_one_line_error(run({"run", "--lock", lock(), "--lease", "100ms", "--", "true"}), 2,
                        "--lease: must be at least 1s");
  expect_one_line_error(run({"run", "--lock", lock(), "--lease", "1000000h", "--", "true"}), 2,
                        "--lease: must be at most 24h, got '1000000h'");
  expect_one_line_error(run({"run", "--lock", lock(), "--frequent", "20s", "--", "true"}), 2,
                        "(--frequent; --renew-deadline not given, so it is the default)");
  const cli_process& printed = run({"run", "--lock", lock(), "--lease", "10h", "--print-config"});
  EXPECT_NE(printed.out().find("--lease 10h\n"), std::string::npos) << printed.out();

  const std::string range = "a term is from 1 to 2^53-1 (9007199254740991)";
  for (const char* term : {"0", "9007199254740992", "18446744073709551615"}) {
    expect_one_line_error(run({"put", "--term", term, object()}), 2, "--term: " + range);
    expect_one_line_error(run({"release", "--lock", lock(), "--if-term", term}), 2,
                          "--if-term: " + range);
  }
}

TEST_F(CliFirstHour, DamagedObjectsAndSlotKeysAreNamedForWhatTheyAre) {
  // A fencing envelope whose term does not parse: not an object a fenced write wrote.
  put_raw(key + ".damaged", "s3lect-fenced term=banana write=1\nbody");
  const std::string damaged = "s3://" + s3.bucket + "/" + key + ".damaged";
  expect_one_line_error(run({"get", "--endpoint", s3.http_endpoint, "--path-style", damaged}), 7,
                        "malformed fenced object");

  put_raw(key + ".slot-0",
          R"({"leaderID":"","lastUpdated":"0001-01-01T00:00:00Z","released":true})");
  expect_one_line_error(status(), 3, lock() + ".slot-N");
}

TEST_F(CliFirstHour, SlotLogLinesNameTheSlotsKey) {
  auto args = run_args("slotted");
  args.insert(args.end(), {"--slots", "2", "--", "sleep", "60"});
  cli_process& node = start(args);
  const auto names_slot = [&] {
    for (const std::string& line : lines_of(node.err())) {
      if (line.find("msg=\"became leader\"") != std::string::npos &&
          line.find("lock=" + lock() + ".slot-") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(eventually(names_slot, 15s)) << node.err();
  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(node.wait(10s));
}

}  // namespace
}  // namespace s3lect::test
