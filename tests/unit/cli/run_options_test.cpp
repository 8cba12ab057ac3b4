// Options of `s3lect run`: durations, the elector's validation reaching the user with the option
// to change, the kill-grace rule, the peer and metrics options, and the command after `--`.
#include "cli/effective_config.hpp"
#include "cli/elector_options.hpp"
#include "cli/run.hpp"

#include <s3lect/tls.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace std::chrono_literals;
using s3lect::cli::check_kill_grace;
using s3lect::cli::option_for_field;
using s3lect::cli::parse_run_options;
using s3lect::cli::run_options;

namespace {

/// Sets the AWS variables the store options need, restoring the previous values afterwards.
class RunOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                             "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"}) {
      const char* value = std::getenv(name);
      if (value) saved_[name] = value;
      ::unsetenv(name);
    }
    ::setenv("AWS_ACCESS_KEY_ID", "test-key", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "test-secret", 1);
  }
  void TearDown() override {
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                             "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"}) {
      ::unsetenv(name);
    }
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

  /// Parses `options` followed by `-- true`.
  std::optional<run_options> parse(std::vector<std::string> options) {
    std::vector<std::string> args{"--lock", "s3://bucket/group/leader.json", "--endpoint",
                                  "http://127.0.0.1:1"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.push_back("true");
    error_.clear();
    return parse_run_options(args, error_);
  }

  /// Expects `options` to be refused with a message containing every one of `parts`.
  void expect_refused(std::vector<std::string> options, std::vector<std::string> parts) {
    auto parsed = parse(options);
    EXPECT_FALSE(parsed.has_value());
    for (const auto& part : parts) {
      EXPECT_NE(error_.find(part), std::string::npos)
          << "'" << error_ << "' lacks '" << part << "'";
    }
  }

  std::string error_;
  std::map<std::string, std::string> saved_;
};

TEST_F(RunOptions, ZeroConfigurationPeerModeOverPlainHttpOffThisHostIsRefused) {
  const auto parse_with = [this](const std::string& endpoint, std::vector<std::string> more) {
    std::vector<std::string> args{"--lock", "s3://bucket/k", "--endpoint", endpoint, "--peer"};
    args.insert(args.end(), more.begin(), more.end());
    args.insert(args.end(), {"--", "true"});
    error_.clear();
    return parse_run_options(args, error_);
  };
  EXPECT_FALSE(parse_with("http://10.0.0.5:9000", {}));
  for (const char* part : {"plain HTTP", "forge", "impostor", "session token", "https://",
                           "--peer-ca", "--trust-plain-http-store"}) {
    EXPECT_NE(error_.find(part), std::string::npos) << error_ << " lacks " << part;
  }
  const auto trusted = parse_with("http://10.0.0.5:9000", {"--trust-plain-http-store"});
  ASSERT_TRUE(trusted) << error_;
  EXPECT_TRUE(trusted->elector.config.peer.trust_unauthenticated_store);
  EXPECT_TRUE(parse_with("https://10.0.0.5:9000", {})) << error_;
  EXPECT_TRUE(parse_with("http://127.0.0.1:7480", {})) << "loopback: " << error_;
  EXPECT_TRUE(parse_with("http://[::1]:7480", {})) << "loopback: " << error_;
  EXPECT_FALSE(parse_with("http://localhost:7480", {})) << "a name may resolve anywhere";
  EXPECT_FALSE(parse_run_options({"--lock", "s3://bucket/k", "--endpoint", "http://10.0.0.5",
                                  "--trust-plain-http-store", "--", "true"},
                                 error_));
  EXPECT_NE(error_.find("needs --peer"), std::string::npos) << error_;
}

TEST_F(RunOptions, DefaultsAreTheLibrarysWithAOneSecondRequestTimeoutAndThreeSecondsGrace) {
  auto options = parse({});
  ASSERT_TRUE(options) << error_;
  const auto& config = options->elector.config;
  EXPECT_EQ(config.lock_key, "group/leader.json");
  EXPECT_EQ(options->store.config.bucket, "bucket");
  EXPECT_EQ(options->store.url(), "s3://bucket/group/leader.json");
  // No timing option: the library's defaults, which ElectorConfig.DefaultsAreTheDesigns pins.
  const s3lect::elector_config defaults;
  EXPECT_EQ(config.lease, defaults.lease);
  EXPECT_EQ(config.renew_deadline, defaults.renew_deadline);
  EXPECT_EQ(config.frequent_interval, defaults.frequent_interval);
  EXPECT_EQ(config.infrequent_interval, defaults.infrequent_interval);
  EXPECT_EQ(config.s3_follower_reads, s3lect::follower_reads::first_hand);
  EXPECT_EQ(config.max_clock_skew, defaults.max_clock_skew);
  EXPECT_EQ(config.acquire_grace, defaults.acquire_grace);
  EXPECT_EQ(config.request_timeout, defaults.request_timeout);
  EXPECT_EQ(options->store.config.request_timeout, 1s) << "client and elector must agree";
  EXPECT_EQ(options->kill_grace, 3s);
  EXPECT_FALSE(options->wait_for_store) << "an unreachable store ends `run` unless asked";
  EXPECT_EQ(options->command, std::vector<std::string>{"true"});
  EXPECT_EQ(config.server_id, s3lect::cli::default_server_id());
  EXPECT_NE(config.server_id.find(':'), std::string::npos);
  EXPECT_EQ(options->elector.level, s3lect::log_level::info);
  EXPECT_EQ(options->elector.format, s3lect::cli::log_format::text);
}

TEST_F(RunOptions, ReadsEveryOption) {
  auto options = parse({"--id",
                        "node-1",
                        "--addr",
                        "10.0.0.1:8443",
                        "--lease",
                        "2s",
                        "--renew-deadline",
                        "1200ms",
                        "--frequent",
                        "400ms",
                        "--infrequent",
                        "3s",
                        "--follower-reads",
                        "economy",
                        "--max-clock-skew",
                        "off",
                        "--acquire-grace",
                        "100ms",
                        "--request-timeout",
                        "150ms",
                        "--retry-delays",
                        "50ms,200ms",
                        "--kill-grace",
                        "500ms",
                        "--log-level",
                        "debug",
                        "--log-format",
                        "json",
                        "--region",
                        "eu-west-1",
                        "--path-style",
                        "--wait-for-store"});
  ASSERT_TRUE(options) << error_;
  const auto& config = options->elector.config;
  EXPECT_EQ(config.server_id, "node-1");
  EXPECT_EQ(config.server_address, "10.0.0.1:8443");
  EXPECT_EQ(config.lease, 2s);
  EXPECT_EQ(config.renew_deadline, 1200ms);
  EXPECT_EQ(config.frequent_interval, 400ms);
  EXPECT_EQ(config.infrequent_interval, 3s);
  EXPECT_EQ(config.s3_follower_reads, s3lect::follower_reads::economy);
  EXPECT_FALSE(config.max_clock_skew.has_value());
  EXPECT_EQ(config.acquire_grace, 100ms);
  EXPECT_EQ(config.request_timeout, 150ms);
  EXPECT_EQ(options->store.config.request_timeout, 150ms);
  EXPECT_EQ(config.retry.delays, (std::vector<std::chrono::milliseconds>{50ms, 200ms}));
  EXPECT_EQ(options->kill_grace, 500ms);
  EXPECT_TRUE(options->wait_for_store);
  EXPECT_EQ(options->elector.level, s3lect::log_level::debug);
  EXPECT_EQ(options->elector.format, s3lect::cli::log_format::json);
  EXPECT_EQ(options->store.config.region, "eu-west-1");
  EXPECT_EQ(options->store.config.addressing, s3lect::addressing_style::path);
}

TEST_F(RunOptions, KeepsTheCommandAndItsOptionsWhole) {
  std::vector<std::string> args{"--lock", "s3://bkt/k", "--endpoint", "http://127.0.0.1:1",
                                "--",     "sh",         "-c",         "echo --lease",
                                "--lock"};
  auto options = parse_run_options(args, error_);
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->command, (std::vector<std::string>{"sh", "-c", "echo --lease", "--lock"}));
}

TEST_F(RunOptions, RefusesMalformedDurations) {
  expect_refused({"--lease", "15"}, {"--lease", "expected a duration", "'15'"});
  expect_refused({"--renew-deadline", "1.5s"}, {"--renew-deadline", "'1.5s'"});
  expect_refused({"--frequent", "-1s"}, {"--frequent"});
  expect_refused({"--infrequent", ""}, {"--infrequent"});
  expect_refused({"--acquire-grace", "soon"}, {"--acquire-grace"});
  expect_refused({"--kill-grace", "3"}, {"--kill-grace", "'3'"});
  expect_refused({"--max-clock-skew", "never"}, {"--max-clock-skew", "or off"});
  expect_refused({"--follower-reads", "cheap"},
                 {"--follower-reads: expected first-hand or economy, got 'cheap'"});
  expect_refused({"--request-timeout", "0"}, {"--request-timeout"});
  expect_refused({"--retry-delays", "100ms,,1s"}, {"--retry-delays", "100ms,1s"});
}

TEST_F(RunOptions, PassesTheLibrarysValidationMessageNamingTheOption) {
  expect_refused(
      {"--renew-deadline", "15s"},
      {"--renew-deadline", "renew_deadline: must be less than lease (15000 ms), is 15000 ms"});
  expect_refused({"--frequent", "10s"},
                 {"(--frequent; --renew-deadline not given, so it is the default)",
                  "renew_deadline: must be greater than frequent_interval"});
  expect_refused({"--infrequent", "1s"}, {"--infrequent", "infrequent_interval: must be at least"});
  expect_refused({"--acquire-grace", "16s"}, {"--acquire-grace", "acquire_grace: must be at most"});
  expect_refused({"--lease", "25h", "--renew-deadline", "10s"},
                 {"--lease: must be at most 24h, got '25h'"});
  expect_refused({"--id", ""}, {"--id", "server_id: must not be empty"});
  expect_refused({"--request-timeout", "2s"}, {"--retry-delays, --request-timeout",
                                               "retry: the worst case of one request (7100 ms"});
}

TEST_F(RunOptions, ShortTimingsNeedShortRetries) {
  const std::vector<std::string> timing{"--lease",      "2s",    "--renew-deadline",  "1200ms",
                                        "--frequent",   "400ms", "--request-timeout", "150ms",
                                        "--kill-grace", "500ms"};
  auto derived_retries = parse(timing);
  ASSERT_TRUE(derived_retries) << error_;
  EXPECT_EQ(derived_retries->elector.config.retry.delays,
            (std::vector<std::chrono::milliseconds>{16ms, 160ms}))
      << "1/50 and 1/5 of renew deadline - frequent, as 100ms,1s are of 5s";
  auto with_defaults = timing;
  with_defaults.insert(with_defaults.end(), {"--retry-delays", "100ms,1s"});
  expect_refused(with_defaults, {"--retry-delays", "1550 ms", "(800 ms)"});
  auto with_short_retries = timing;
  with_short_retries.insert(with_short_retries.end(), {"--retry-delays", "50ms,200ms"});
  EXPECT_TRUE(parse(with_short_retries)) << error_;
  auto single_attempt = timing;
  single_attempt.insert(single_attempt.end(), {"--retry-delays", "none"});
  auto options = parse(single_attempt);
  ASSERT_TRUE(options) << error_;
  EXPECT_TRUE(options->elector.config.retry.delays.empty());
}

TEST_F(RunOptions, KillGraceMustEndBeforeAnotherNodeMayTakeOver) {
  expect_refused(
      {"--kill-grace", "5s"},
      {"--kill-grace: must be less than lease - renew deadline (5000 ms)", "is 5000 ms"});
  expect_refused({"--kill-grace", "1m"}, {"--kill-grace", "is 60000 ms"});
  EXPECT_TRUE(parse({"--kill-grace", "4999ms"})) << error_;
  EXPECT_TRUE(parse({"--kill-grace", "0"})) << error_;
  expect_refused({"--lease", "20s", "--renew-deadline", "10s", "--kill-grace", "10s"},
                 {"(10000 ms)", "is 10000 ms"});
  EXPECT_TRUE(parse({"--lease", "20s", "--renew-deadline", "10s", "--kill-grace", "9s"})) << error_;
  expect_refused({"--lease", "20s", "--kill-grace", "9s"}, {"(6667 ms)", "is 9000 ms"});
  auto derived = parse({"--lease", "20s", "--renew-deadline", "10s"});
  ASSERT_TRUE(derived) << error_;
  EXPECT_EQ(derived->kill_grace, 6s) << "3/5 of lease - renew deadline, as 3s is of 5s";
}

TEST(KillGrace, ComparesWithLeaseMinusRenewDeadline) {
  s3lect::elector_config config;
  config.lease = 2s;
  config.renew_deadline = 1200ms;
  EXPECT_FALSE(check_kill_grace(799ms, config));
  EXPECT_TRUE(check_kill_grace(800ms, config));
  EXPECT_FALSE(check_kill_grace(0ms, config));
}

TEST_F(RunOptions, RefusesBadArgumentsWithOneClearLine) {
  expect_refused({"--addr", "nohost"}, {"--addr: expected HOST:PORT"});
  expect_refused({"--addr", "host:0"}, {"--addr"});
  expect_refused({"--addr", "host:70000"}, {"--addr"});
  EXPECT_TRUE(parse({"--addr", "[::1]:8443"})) << error_;
  expect_refused({"--log-level", "verbose"}, {"--log-level", "'verbose'"});
  expect_refused({"--log-format", "xml"}, {"--log-format", "'xml'"});
  std::vector<std::string> valueless{"--lock", "s3://b/k", "--lease"};
  EXPECT_FALSE(parse_run_options(valueless, error_));
  EXPECT_NE(error_.find("option --lease needs a value"), std::string::npos) << error_;
  expect_refused({"--frobnicate", "1"}, {"unknown option --frobnicate"});
  expect_refused({"--lease", "2s", "--lease", "3s"}, {"--lease given twice"});
  expect_refused({"stray"}, {"unexpected argument 'stray'", "--"});

  std::vector<std::string> no_lock{"--endpoint", "http://127.0.0.1:1", "--", "true"};
  EXPECT_FALSE(parse_run_options(no_lock, error_));
  EXPECT_NE(error_.find("missing --lock"), std::string::npos) << error_;
  std::vector<std::string> no_command{"--lock", "s3://b/k", "--endpoint", "http://127.0.0.1:1"};
  EXPECT_FALSE(parse_run_options(no_command, error_));
  EXPECT_NE(error_.find("missing the command"), std::string::npos) << error_;
  std::vector<std::string> empty_command{"--lock", "s3://b/k", "--"};
  EXPECT_FALSE(parse_run_options(empty_command, error_));
  EXPECT_NE(error_.find("missing the command"), std::string::npos) << error_;
}

/// Peer options with certificate files that exist (their content matters only to the servers).
class PeerOptions : public RunOptions {
 protected:
  void SetUp() override {
    RunOptions::SetUp();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("s3lect-peer-options-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (const char* name : {"cert.pem", "key.pem", "ca.pem", "client.pem", "client-key.pem"}) {
      std::ofstream(dir_ / name) << "PEM\n";
    }
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    RunOptions::TearDown();
  }
  std::string file(const char* name) const { return (dir_ / name).string(); }

  /// --peer with the server certificate and key, then `more`.
  std::vector<std::string> peer(std::vector<std::string> more) const {
    std::vector<std::string> options{"--peer", "--peer-cert", file("cert.pem"), "--peer-key",
                                     file("key.pem")};
    options.insert(options.end(), more.begin(), more.end());
    return options;
  }

  std::filesystem::path dir_;
};

TEST_F(PeerOptions, PeerModeListensOnTheAddressFollowersUse) {
  auto options = parse(peer({"--peer-listen", "127.0.0.1:8443"}));
  ASSERT_TRUE(options) << error_;
  const auto& config = options->elector.config;
  EXPECT_TRUE(config.peer.enabled);
  EXPECT_FALSE(config.peer.watch);
  EXPECT_EQ(config.server_address, "127.0.0.1:8443") << "leaderAddr defaults to --peer-listen";
  EXPECT_TRUE(config.peer.tls.ca_file.empty()) << "default: the system's CAs";
  EXPECT_EQ(config.peer.timeout, s3lect::elector_config{}.peer.timeout);
  const auto& server = options->elector.serve.peer_server;
  ASSERT_TRUE(server);
  EXPECT_EQ(server->bind_address, "127.0.0.1:8443");
  EXPECT_EQ(server->tls.certificate_file, file("cert.pem"));
  EXPECT_EQ(server->tls.private_key_file, file("key.pem"));
  EXPECT_EQ(server->handler.path, config.peer.health_path);
  EXPECT_FALSE(server->tls.require_client_cert);
  EXPECT_TRUE(server->tls.ca_file.empty());
  EXPECT_FALSE(options->elector.serve.metrics_listen);
}

TEST_F(PeerOptions, WithoutPeerListenTheServerListensOnAllInterfacesOnTheAddrPort) {
  auto options = parse(peer({"--addr", "node-1.internal:9443", "--peer-watch"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.config.server_address, "node-1.internal:9443");
  EXPECT_TRUE(options->elector.config.peer.watch);
  EXPECT_EQ(options->elector.serve.peer_server->bind_address, "0.0.0.0:9443");
  options = parse(peer({"--addr", "[fd00::5]:9443"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.serve.peer_server->bind_address, "[::]:9443");
  options = parse(peer({"--addr", "10.0.0.5:8443", "--peer-listen", "0.0.0.0:8443"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.config.server_address, "10.0.0.5:8443");
  EXPECT_EQ(options->elector.serve.peer_server->bind_address, "0.0.0.0:8443");
}

TEST_F(PeerOptions, PeerTimeoutBoundsEachAttemptToAskTheLeader) {
  auto options = parse(peer({"--peer-listen", "127.0.0.1:8443", "--peer-timeout", "250ms"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.config.peer.timeout, std::chrono::milliseconds{250});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-timeout", "0s"}),
                 {"--peer-timeout: expected a duration greater than 0", "'0s'"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-timeout", "soon"}),
                 {"--peer-timeout: expected", "'soon'"});
}

TEST_F(PeerOptions, MutualTlsOnBothSidesWithAClientCertificate) {
  auto options = parse(
      peer({"--peer-listen", "127.0.0.1:8443", "--peer-ca", file("ca.pem"), "--peer-client-cert",
            file("client.pem"), "--peer-client-key", file("client-key.pem")}));
  ASSERT_TRUE(options) << error_;
  const auto& config = options->elector.config;
  EXPECT_EQ(config.peer.tls.ca_file, file("ca.pem"));
  EXPECT_EQ(config.peer.tls.certificate_file, file("client.pem"));
  EXPECT_EQ(config.peer.tls.private_key_file, file("client-key.pem"));
  const auto& server = *options->elector.serve.peer_server;
  EXPECT_TRUE(server.tls.require_client_cert);
  EXPECT_EQ(server.tls.ca_file, file("ca.pem"));

  // A CA alone verifies the leader; the server then asks for no client certificate.
  options = parse(peer({"--peer-listen", "127.0.0.1:8443", "--peer-ca", file("ca.pem")}));
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.config.peer.tls.ca_file, file("ca.pem"));
  EXPECT_FALSE(options->elector.serve.peer_server->tls.require_client_cert);
  EXPECT_TRUE(options->elector.serve.peer_server->tls.ca_file.empty());
}

TEST_F(PeerOptions, WithoutCertificatesTheNodeMakesAnIdentityAndPinsItsKey) {
  const auto options = parse({"--peer", "--peer-listen", "127.0.0.1:8443"});
  ASSERT_TRUE(options) << error_;
  const s3lect::health_server_config& server = *options->elector.serve.peer_server;
  EXPECT_TRUE(server.tls.certificate_file.empty());
  EXPECT_NE(server.tls.certificate_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(server.tls.private_key_pem.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(options->elector.config.peer.key_pin,
            s3lect::public_key_pin(server.tls.certificate_pem));
  EXPECT_FALSE(options->elector.config.peer.key_pin.empty());
  const auto again = parse({"--peer", "--peer-listen", "127.0.0.1:8443"});
  ASSERT_TRUE(again);
  EXPECT_NE(again->elector.config.peer.key_pin, options->elector.config.peer.key_pin)
      << "a fresh key per start";
}

TEST_F(PeerOptions, PeerAloneListensOnAFreePortOfEveryInterfaceAndAdvertisesWhereItListens) {
  const auto options = parse({"--peer"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.serve.peer_server->bind_address, "0.0.0.0:0");
  EXPECT_TRUE(options->elector.serve.peer_server->publish_endpoint);
  EXPECT_TRUE(options->elector.config.peer.enabled);
}

TEST_F(PeerOptions, OnlyAWildcardOrAFreePortIsAdvertisedAfterListening) {
  for (const char* listen : {"0.0.0.0:8443", "[::]:8443", "127.0.0.1:0"}) {
    const auto options = parse({"--peer", "--peer-listen", listen});
    ASSERT_TRUE(options) << listen << ": " << error_;
    EXPECT_EQ(options->elector.serve.peer_server->bind_address, listen);
    EXPECT_TRUE(options->elector.serve.peer_server->publish_endpoint) << listen;
  }
  const auto fixed = parse({"--peer", "--peer-listen", "127.0.0.1:8443"});
  ASSERT_TRUE(fixed) << error_;
  EXPECT_FALSE(fixed->elector.serve.peer_server->publish_endpoint);
  EXPECT_EQ(fixed->elector.config.server_address, "127.0.0.1:8443");
}

TEST_F(PeerOptions, PeerAdvertiseIsTheLeaderAddrAndItsPortTheDefaultListenPort) {
  const auto options = parse({"--peer", "--peer-advertise", "lb.example:9443"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.config.server_address, "lb.example:9443");
  EXPECT_EQ(options->elector.serve.peer_server->bind_address, "0.0.0.0:9443");
  EXPECT_FALSE(options->elector.serve.peer_server->publish_endpoint);
  const auto behind_nat =
      parse({"--peer", "--peer-advertise", "203.0.113.7:443", "--peer-listen", "10.0.0.5:0"});
  ASSERT_TRUE(behind_nat) << error_;
  EXPECT_EQ(behind_nat->elector.config.server_address, "203.0.113.7:443");
  EXPECT_FALSE(behind_nat->elector.serve.peer_server->publish_endpoint);
}

TEST_F(PeerOptions, WithACertificateThereIsNoPin) {
  const auto options = parse(peer({"--peer-listen", "127.0.0.1:8443"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_TRUE(options->elector.config.peer.key_pin.empty());
  EXPECT_TRUE(options->elector.serve.peer_server->tls.certificate_pem.empty());
}

TEST_F(PeerOptions, RefusesIncompleteOrContradictoryPeerOptions) {
  for (const char* option :
       {"--peer-listen=127.0.0.1:8443", "--peer-cert=c", "--peer-key=k", "--peer-ca=a",
        "--peer-client-cert=c", "--peer-client-key=k", "--peer-watch", "--peer-timeout=1s"}) {
    const std::string name = std::string(option).substr(0, std::string(option).find('='));
    expect_refused({option}, {name + ": needs --peer"});
  }
  expect_refused({"--peer", "--peer-listen", "127.0.0.1:8443", "--peer-key", file("key.pem")},
                 {"--peer-key: needs --peer-cert"});
  expect_refused({"--peer", "--peer-listen", "127.0.0.1:8443", "--peer-cert", file("cert.pem")},
                 {"--peer-cert: needs --peer-key"});
  expect_refused(peer({"--addr", "0.0.0.0:8443"}), {"--addr: 0.0.0.0:8443 is not an address"});
  expect_refused(peer({"--peer-listen", "localhost:8443"}), {"--peer-listen: expected IP:PORT"});
  expect_refused(peer({"--peer-listen", "127.0.0.1"}), {"--peer-listen: expected IP:PORT"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:99999"}), {"--peer-listen"});
  expect_refused(peer({"--peer-advertise", "10.0.0.5"}), {"--peer-advertise: expected HOST:PORT"});
  expect_refused(peer({"--peer-advertise", "10.0.0.5:0"}), {"--peer-advertise: expected"});
  expect_refused(peer({"--peer-advertise", "10.0.0.5:65536"}), {"--peer-advertise: expected"});
  expect_refused(peer({"--peer-advertise", "0.0.0.0:8443"}),
                 {"--peer-advertise: 0.0.0.0:8443 is not"});
  expect_refused(peer({"--addr", "10.0.0.5:8443", "--peer-advertise", "10.0.0.5:8443"}),
                 {"--peer-advertise: give it or --addr, not both"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-client-cert", file("client.pem"),
                       "--peer-ca", file("ca.pem")}),
                 {"--peer-client-cert: needs --peer-client-key"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-client-key",
                       file("client-key.pem"), "--peer-ca", file("ca.pem")}),
                 {"--peer-client-key: needs --peer-client-cert"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-client-cert", file("client.pem"),
                       "--peer-client-key", file("client-key.pem")}),
                 {"--peer-client-cert: mutual TLS needs --peer-ca"});
  expect_refused({"--peer", "--peer-listen", "127.0.0.1:8443", "--peer-cert", file("missing.pem"),
                  "--peer-key", file("key.pem")},
                 {"--peer-cert: cannot read '" + file("missing.pem") + "'", "No such file"});
  expect_refused(peer({"--peer-listen", "127.0.0.1:8443", "--peer-ca", file("missing.pem")}),
                 {"--peer-ca: cannot read"});
  expect_refused({"--peer", "--peer", "--peer-listen", "127.0.0.1:8443"}, {"--peer given twice"});
  expect_refused({"--peer=yes"}, {"--peer takes no value"});
  // After `--` they belong to the command.
  std::vector<std::string> args{"--lock", "s3://bkt/k", "--endpoint", "http://127.0.0.1:1",
                                "--",     "server",     "--peer"};
  auto options = parse_run_options(args, error_);
  ASSERT_TRUE(options) << error_;
  EXPECT_FALSE(options->elector.config.peer.enabled);
  EXPECT_FALSE(options->elector.serve.peer_server);
}

TEST_F(RunOptions, MetricsListenTakesAnIpAndPort) {
  auto options = parse({"--metrics-listen", "127.0.0.1:9100"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.serve.metrics_listen, std::optional<std::string>("127.0.0.1:9100"));
  EXPECT_FALSE(options->elector.config.peer.enabled);
  options = parse({"--metrics-listen", "[::1]:0"});
  ASSERT_TRUE(options) << error_;
  expect_refused({"--metrics-listen", "localhost:9100"}, {"--metrics-listen: expected IP:PORT"});
  expect_refused({"--metrics-listen", "9100"}, {"--metrics-listen: expected IP:PORT"});
  expect_refused({"--metrics-listen", ":9100"}, {"--metrics-listen"});
}

TEST_F(RunOptions, LivenessStallNeedsTheMetricsListenerThatServesHealthz) {
  auto options = parse({"--metrics-listen", "127.0.0.1:9100"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.serve.liveness_stall, std::chrono::milliseconds{0});
  options = parse({"--metrics-listen", "127.0.0.1:9100", "--liveness-stall", "2m"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->elector.serve.liveness_stall, std::chrono::minutes{2});
  expect_refused({"--liveness-stall", "2m"}, {"--liveness-stall: needs --metrics-listen"});
  expect_refused({"--metrics-listen", "127.0.0.1:9100", "--liveness-stall", "0s"},
                 {"--liveness-stall: expected a duration greater than 0"});
}

TEST_F(PeerOptions, MetricsListenWorksBesidePeerMode) {
  auto options =
      parse(peer({"--peer-listen", "127.0.0.1:8443", "--metrics-listen", "127.0.0.1:9100"}));
  ASSERT_TRUE(options) << error_;
  EXPECT_TRUE(options->elector.serve.peer_server);
  EXPECT_EQ(options->elector.serve.metrics_listen, std::optional<std::string>("127.0.0.1:9100"));
}

TEST(ServerFields, NameTheirOptions) {
  EXPECT_EQ(s3lect::cli::option_for_server_field("certificate_file"), "--peer-cert");
  EXPECT_EQ(s3lect::cli::option_for_server_field("private_key_file"), "--peer-key");
  EXPECT_EQ(s3lect::cli::option_for_server_field("tls.ca_file"), "--peer-ca");
  EXPECT_EQ(s3lect::cli::option_for_server_field("tls.private_key"), "--peer-key");
  EXPECT_EQ(option_for_field("peer.tls.private_key"), "--peer-client-key");
  EXPECT_EQ(s3lect::cli::option_for_server_field("bind_address"), "--peer-listen");
  EXPECT_EQ(option_for_field("peer.tls.ca_file"), "--peer-ca");
  EXPECT_EQ(option_for_field("peer.tls.certificate_file"), "--peer-client-cert");
  EXPECT_EQ(option_for_field("peer.tls.private_key_file"), "--peer-client-key");
}

TEST(OptionForField, NamesTheOptionOfEveryTimingField) {
  EXPECT_EQ(option_for_field("lease"), "--lease");
  EXPECT_EQ(option_for_field("renew_deadline"), "--renew-deadline");
  EXPECT_EQ(option_for_field("frequent_interval"), "--frequent");
  EXPECT_EQ(option_for_field("infrequent_interval"), "--infrequent");
  EXPECT_EQ(option_for_field("max_clock_skew"), "--max-clock-skew");
  EXPECT_EQ(option_for_field("acquire_grace"), "--acquire-grace");
  EXPECT_EQ(option_for_field("server_id"), "--id");
  EXPECT_EQ(option_for_field("peer.timeout"), "--peer-timeout");
  EXPECT_EQ(option_for_field("retry.delays[1]"), "--retry-delays, --request-timeout");
  EXPECT_EQ(option_for_field("peer.health_path"), "");
  EXPECT_EQ(option_for_field("coordination.priority"), "--priority");
  EXPECT_EQ(option_for_field("coordination.handover_window"), "--handover-window");
  EXPECT_EQ(option_for_field("coordination.rank_step"), "--rank-step");
}

TEST(RunHelp, DocumentsEveryOptionAndExitCode) {
  const std::string help = s3lect::cli::run_help();
  for (const char* option : {"--lock",
                             "--endpoint",
                             "--region",
                             "--ca-file",
                             "--path-style",
                             "--id",
                             "--addr",
                             "--lease",
                             "--renew-deadline",
                             "--frequent",
                             "--infrequent",
                             "--follower-reads",
                             "--max-clock-skew",
                             "--acquire-grace",
                             "--request-timeout",
                             "--retry-delays",
                             "--priority",
                             "--handover-window",
                             "--rank-step",
                             "--kill-grace",
                             "--log-level",
                             "--log-format",
                             "--peer",
                             "--peer-listen",
                             "--peer-cert",
                             "--peer-key",
                             "--peer-ca",
                             "--peer-client-cert",
                             "--peer-client-key",
                             "--peer-watch",
                             "--peer-timeout",
                             "--metrics-listen",
                             "--timeout",
                             "--slots",
                             "--pass-stdin",
                             "--print-config",
                             "S3LECT_SLOT",
                             "--liveness-stall",
                             "/healthz",
                             "/readyz",
                             "S3LECT_TERM",
                             "S3LECT_LEADER_ID",
                             "S3LECT_LOCK",
                             "126",
                             "127"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
  EXPECT_EQ(help.find("not yet supported"), std::string::npos);
  EXPECT_NE(help.find("  9    the --peer-listen or --metrics-listen address cannot be bound"),
            std::string::npos);
  EXPECT_NE(help.find("  11   not elected within --timeout"), std::string::npos);
}

TEST(RunHelp, EveryOptionStatesItsDefaultOrThatItIsRequired) {
  // An option's entry runs from its line to the next option's: it must say "default" or
  // "required" (--help and --lock aside, which is required).
  const std::string help = s3lect::cli::run_help();
  const auto options_start = help.find("options:\n");
  const auto options_end = help.find("  Durations:");
  ASSERT_NE(options_start, std::string::npos);
  ASSERT_NE(options_end, std::string::npos);
  std::istringstream lines(help.substr(options_start, options_end - options_start));
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  --", 0) == 0) {
      entries.emplace_back(line.substr(2, line.find(' ', 2) - 2), line);
    } else if (!entries.empty()) {
      entries.back().second += " " + line;
    }
  }
  EXPECT_GE(entries.size(), 25u);
  for (const auto& [option, text] : entries) {
    if (option == "--help") continue;
    EXPECT_TRUE(text.find("default") != std::string::npos ||
                text.find("required") != std::string::npos)
        << option << ": " << text;
  }
}

}  // namespace

namespace {

using s3lect::cli::print_config_text;

TEST_F(RunOptions, LeaseAloneDerivesEveryOtherTiming) {
  for (const char* lease : {"2s", "6s", "15s", "60s", "2m"}) {
    SCOPED_TRACE(lease);
    auto options = parse({"--lease", lease});
    ASSERT_TRUE(options) << error_;
    const s3lect::elector_config& config = options->elector.config;
    const s3lect::elector_config expected = s3lect::elector_config::for_lease(config.lease);
    EXPECT_EQ(config.renew_deadline, expected.renew_deadline);
    EXPECT_EQ(config.frequent_interval, expected.frequent_interval);
    EXPECT_EQ(config.infrequent_interval, expected.infrequent_interval);
    EXPECT_EQ(config.request_timeout, expected.request_timeout);
    EXPECT_EQ(options->store.config.request_timeout, expected.request_timeout)
        << "the client and the elector agree";
    EXPECT_EQ(config.retry.delays, expected.retry.delays);
    EXPECT_EQ(config.peer.timeout, expected.peer.timeout);
    EXPECT_EQ(options->kill_grace, config.lease / 5);
  }
}

TEST_F(RunOptions, ExplicitTimingWinsOverTheDerived) {
  auto options = parse({"--lease", "6s", "--renew-deadline", "5s", "--frequent", "1s",
                        "--kill-grace", "200ms", "--request-timeout", "300ms"});
  ASSERT_TRUE(options) << error_;
  const s3lect::elector_config& config = options->elector.config;
  EXPECT_EQ(config.renew_deadline, 5s);
  EXPECT_EQ(config.frequent_interval, 1s);
  EXPECT_EQ(config.request_timeout, 300ms);
  EXPECT_EQ(options->kill_grace, 200ms);
  EXPECT_EQ(config.infrequent_interval, 6s) << "6 x the given frequent interval";
  EXPECT_EQ(config.retry.delays, (std::vector<std::chrono::milliseconds>{80ms, 800ms}))
      << "1/50 and 1/5 of the given renew deadline - frequent";
  EXPECT_EQ(options->elector.derived,
            (std::vector<std::string>{"infrequent", "retry-delays", "peer-timeout",
                                      "handover-window", "rank-step", "settle"}));
}

TEST_F(RunOptions, ContradictionsWithTheLeaseAreStillRefused) {
  expect_refused({"--lease", "6s", "--renew-deadline", "6s"},
                 {"--renew-deadline", "must be less than lease (6000 ms)"});
  expect_refused({"--lease", "6s", "--frequent", "5s"},
                 {"(--frequent; --renew-deadline not given, so it follows --lease)",
                  "greater than frequent_interval (5000 ms)"});
  expect_refused({"--lease", "6s", "--request-timeout", "2s"},
                 {"--retry-delays, --request-timeout", "(2000 ms)"});
  expect_refused({"--lease", "6s", "--kill-grace", "3s"}, {"--kill-grace", "(2000 ms)"});
}

TEST_F(RunOptions, TheShortestLeaseIsOneSecondAndNamedAsGiven) {
  expect_refused({"--lease", "10ms"}, {"--lease: must be at least 1s", "got '10ms'"});
  expect_refused({"--lease", "100ms"}, {"--lease: must be at least 1s", "got '100ms'"});
  auto shortest = parse({"--lease", "1s"});
  ASSERT_TRUE(shortest) << error_;
  const s3lect::elector_config& config = shortest->elector.config;
  EXPECT_EQ(config.request_timeout, 66ms) << "as documented in docs/configuration.md";
  EXPECT_EQ(config.retry.delays, (std::vector<std::chrono::milliseconds>{6ms, 66ms}));
  EXPECT_EQ(config.renew_deadline, 666ms);
  EXPECT_EQ(config.frequent_interval, 333ms);
}

TEST_F(RunOptions, TooLongDurationsGetOneRangeMessageWhateverTheirSize) {
  for (const char* too_long : {"25h", "1000000h", "99999999999999999999h"}) {
    expect_refused({"--lease", too_long}, {"--lease: must be at most 24h", too_long});
  }
  expect_refused({"--infrequent", "1000000h"}, {"--infrequent: must be at most 24h"});
}

TEST_F(RunOptions, FrequentAloneBlamesFrequentNotTheDerivedRenewDeadline) {
  expect_refused({"--frequent", "20s"},
                 {"(--frequent; --renew-deadline not given, so it is the default)",
                  "(20000 ms), is 10000 ms"});
}

TEST_F(RunOptions, PrintConfigShowsWhatTheLeaseDerived) {
  std::vector<std::string> args{
      "--lock", "s3://bucket/k", "--endpoint", "http://127.0.0.1:1", "--id", "n1", "--lease",
      "6s",     "--frequent",    "1500ms",     "--print-config"};
  auto options = parse_run_options(args, error_);
  ASSERT_TRUE(options) << error_ << " (no command needed with --print-config)";
  EXPECT_EQ(print_config_text(*options),
            "--lock s3://bucket/k\n"
            "--id n1\n"
            "--lease 6s\n"
            "--renew-deadline 4s             # derived\n"
            "--frequent 1500ms\n"
            "--infrequent 9s                 # derived\n"
            "--follower-reads first-hand\n"
            "--max-clock-skew 2s\n"
            "--acquire-grace 0\n"
            "--request-timeout 500ms         # derived\n"
            "--retry-delays 50ms,500ms       # derived\n"
            "--priority 0\n"
            "--handover-window 300ms         # derived\n"
            "--rank-step 0                   # derived\n"
            "--settle 6s                     # derived\n"
            "--peer-timeout 1200ms           # derived\n"
            "--kill-grace 1200ms             # derived\n"
            "--isolation auto\n");
  args.pop_back();
  EXPECT_FALSE(parse_run_options(args, error_)) << "without --print-config the command is needed";
}

TEST_F(RunOptions, PrintConfigListsNoPreemptOnlyWhenGiven) {
  std::vector<std::string> args{
      "--lock", "s3://bucket/k",  "--endpoint",  "http://127.0.0.1:1", "--id",
      "n1",     "--print-config", "--no-preempt"};
  auto options = parse_run_options(args, error_);
  ASSERT_TRUE(options) << error_;
  const std::string text = print_config_text(*options);
  // A bare flag, as it is given, between --settle and --peer-timeout as in the help.
  EXPECT_NE(text.find("--settle 15s\n--no-preempt\n--peer-timeout"), std::string::npos) << text;
  args.pop_back();
  options = parse_run_options(args, error_);
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(print_config_text(*options).find("preempt"), std::string::npos);
}

TEST_F(RunOptions, CoordinationOptionsSetTheirFieldsAndNameThemselvesWhenWrong) {
  auto options = parse({"--priority", "-20", "--handover-window", "400ms", "--rank-step", "1s"});
  ASSERT_TRUE(options) << error_;
  const s3lect::coordination_config& coordination = options->elector.config.coordination;
  EXPECT_EQ(coordination.priority, -20);
  EXPECT_EQ(coordination.handover_window, std::optional<std::chrono::milliseconds>(400ms));
  EXPECT_EQ(coordination.rank_step, std::optional<std::chrono::milliseconds>(1s));
  auto defaults = parse({});
  ASSERT_TRUE(defaults) << error_;
  EXPECT_EQ(defaults->elector.config.coordination.priority, 0);
  EXPECT_FALSE(defaults->elector.config.coordination.handover_window) << "follows the timing";
  EXPECT_FALSE(defaults->elector.config.coordination.rank_step) << "follows the mode";

  for (const char* bad : {"high", "1.5", "5x", "99999999999"}) {
    expect_refused({"--priority", bad}, {"--priority: expected an integer", bad});
  }
  expect_refused({"--priority", "1000001"}, {"(--priority)", "1000000"});
  expect_refused({"--handover-window", "0"}, {"(--handover-window)", "greater than 0"});
  expect_refused({"--handover-window", "16s"}, {"(--handover-window)", "at most lease"});
  expect_refused({"--rank-step", "2s"}, {"(--rank-step)", "lease - renew_deadline"});
  expect_refused({"--rank-step", "soon"}, {"--rank-step", "'soon'"});
}

TEST_F(RunOptions, IsolationIsAutoOrALevelToRequire) {
  auto options = parse({});
  ASSERT_TRUE(options) << error_;
  EXPECT_FALSE(options->extras.isolation) << "auto: whatever the system allows";
  options = parse({"--isolation", "pid-namespace,cgroup"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->extras.isolation, (s3lect::guardian::isolation{true, true}));
  options = parse({"--isolation", "guardian"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->extras.isolation, s3lect::guardian::isolation{});
  expect_refused({"--isolation", "container"}, {"--isolation", "'container'"});
}

TEST_F(RunOptions, RefusesBadParityOptions) {
  expect_refused({"--timeout", "0"}, {"--timeout", "greater than 0", "'0'"});
  expect_refused({"--timeout", "soon"}, {"--timeout", "'soon'"});
  expect_refused({"--slots", "0"}, {"--slots", "from 1 to 64", "'0'"});
  expect_refused({"--slots", "65"}, {"--slots", "'65'"});
  expect_refused({"--slots", "2x"}, {"--slots", "'2x'"});
  auto options = parse({"--timeout", "30s", "--slots", "3", "--pass-stdin"});
  ASSERT_TRUE(options) << error_;
  EXPECT_EQ(options->extras.timeout, std::optional<std::chrono::milliseconds>(30s));
  EXPECT_EQ(options->extras.slots, 3u);
  EXPECT_TRUE(options->extras.pass_stdin);
}

}  // namespace
