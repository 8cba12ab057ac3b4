// elector_config: the design's defaults, and each validation rule naming its field.
#include <s3lect/config.hpp>
#include <s3lect/s3_client.hpp>

#include <gtest/gtest.h>

#include <string>

namespace s3lect {
namespace {

using namespace std::chrono_literals;

elector_config valid() {
  elector_config config;
  config.lock_key = "leader/group.json";
  config.server_id = "api-7";
  return config;
}

// Expects validate() to fail with exactly `message`.
void expect_invalid(const elector_config& config, const std::string& message) {
  const std::optional<std::string> error = config.validate();
  ASSERT_TRUE(error.has_value()) << "expected: " << message;
  EXPECT_EQ(*error, message);
}

TEST(ElectorConfig, DefaultsAreTheDesigns) {
  const elector_config config;
  EXPECT_EQ(config.lease, 15s);
  EXPECT_EQ(config.renew_deadline, 10s);
  EXPECT_EQ(config.frequent_interval, 5s);
  EXPECT_EQ(config.infrequent_interval, 30s);
  EXPECT_EQ(config.max_clock_skew, std::optional<std::chrono::milliseconds>(2s));
  EXPECT_EQ(config.acquire_grace, 0ms);
  EXPECT_EQ(config.request_timeout, 1s);
  EXPECT_EQ(config.retry.delays, (std::vector<std::chrono::milliseconds>{100ms, 1000ms}));
  EXPECT_FALSE(config.peer.enabled);
  EXPECT_EQ(config.peer.health_path, "/health/leadership");
  EXPECT_EQ(config.peer.timeout, 3s);
  EXPECT_FALSE(config.log.enabled(log_level::error)) << "silent by default";
  EXPECT_EQ(valid().validate(), std::nullopt);
}

TEST(ElectorConfig, NeedsKeyAndId) {
  elector_config config = valid();
  config.lock_key.clear();
  expect_invalid(config, "lock_key: must not be empty");
  config = valid();
  config.server_id.clear();
  expect_invalid(config, "server_id: must not be empty");
}

TEST(ElectorConfig, LimitsTextLengths) {
  elector_config config = valid();
  config.lock_key = std::string(1024, 'k');
  EXPECT_EQ(config.validate(), std::nullopt);
  config.lock_key += 'k';
  expect_invalid(config, "lock_key: must be at most 1024 bytes, is 1025 bytes");
  config = valid();
  config.server_id = std::string(1025, 'i');
  expect_invalid(config, "server_id: must be at most 1024 bytes, is 1025 bytes");
  config = valid();
  config.server_address = std::string(1025, 'a');
  expect_invalid(config, "server_address: must be at most 1024 bytes, is 1025 bytes");
}

TEST(ElectorConfig, TextMustBeUtf8) {
  elector_config config = valid();
  config.server_id = "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80";  // é € 😀
  EXPECT_EQ(config.validate(), std::nullopt);
  for (const char* bad :
       {"\xff", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80"}) {
    config.server_id = bad;
    expect_invalid(config, "server_id: must be valid UTF-8");
  }
  config = valid();
  config.lock_key = "leader/\xfe.json";
  expect_invalid(config, "lock_key: must be valid UTF-8");
}

TEST(ElectorConfig, PeerModeOverAnUnauthenticatedStoreNeedsCasOrExplicitTrust) {
  s3lect::peer_config peer;
  EXPECT_FALSE(s3lect::validate_store_trust(peer, false)) << "peer mode off";
  peer.enabled = true;
  EXPECT_FALSE(s3lect::validate_store_trust(peer, true));
  const auto refused = s3lect::validate_store_trust(peer, false);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->rfind("peer.enabled: ", 0), 0u) << *refused;
  peer.tls.ca_pem = "-----BEGIN CERTIFICATE-----";
  EXPECT_FALSE(s3lect::validate_store_trust(peer, false)) << "CA mode ignores record pins";
  peer.tls.ca_pem.clear();
  peer.trust_unauthenticated_store = true;
  EXPECT_FALSE(s3lect::validate_store_trust(peer, false));
}

TEST(ElectorConfig, S3EndpointsAuthenticateOverHttpsOrLoopbackOnly) {
  s3lect::s3_config s3;
  EXPECT_TRUE(s3.answers_authenticated()) << "empty: AWS's https:// endpoint";
  for (const char* endpoint : {"https://s3.example.com", "http://127.0.0.1:7480",
                               "http://127.9.9.9", "http://[::1]:9000"}) {
    s3.endpoint = endpoint;
    EXPECT_TRUE(s3.answers_authenticated()) << endpoint;
  }
  for (const char* endpoint : {"http://s3.example.com", "http://10.0.0.1:9000", "http://localhost",
                               "http://[::ffff:127.0.0.1]", "garbage"}) {
    s3.endpoint = endpoint;
    EXPECT_FALSE(s3.answers_authenticated()) << endpoint;
  }
}

TEST(ElectorConfig, PeerModeAddressMayComeFromAZeroConfigurationServer) {
  elector_config config = valid();
  config.peer.enabled = true;
  config.server_address.clear();
  EXPECT_EQ(config.validate(), std::nullopt) << "health_server::start() publishes the address";
  config.server_address = std::string(1025, 'a');
  expect_invalid(config, "server_address: must be at most 1024 bytes, is 1025 bytes");
  config.server_address = "10.0.1.42:8443";
  EXPECT_EQ(config.validate(), std::nullopt);
}

TEST(ElectorConfig, LeaseIsPositiveAndAtMostADay) {
  elector_config config = valid();
  config.lease = 0ms;
  expect_invalid(config, "lease: must be greater than 0, is 0 ms");
  config.lease = 24h + 1ms;
  expect_invalid(config, "lease: must be at most 86400000 ms (24 h), is 86400001 ms");
}

TEST(ElectorConfig, LeaseExceedsDeadlineExceedsFrequentInterval) {
  elector_config config = valid();
  config.renew_deadline = 15s;
  expect_invalid(config, "renew_deadline: must be less than lease (15000 ms), is 15000 ms");
  config = valid();
  config.renew_deadline = 5s;
  expect_invalid(config,
                 "renew_deadline: must be greater than frequent_interval (5000 ms), is 5000 ms");
  config = valid();
  config.frequent_interval = 0ms;
  expect_invalid(config, "frequent_interval: must be greater than 0, is 0 ms");
  config.frequent_interval = -5ms;
  expect_invalid(config, "frequent_interval: must be greater than 0, is -5 ms");
}

TEST(ElectorConfig, InfrequentIntervalAtLeastFrequent) {
  elector_config config = valid();
  config.infrequent_interval = 5s;
  EXPECT_EQ(config.validate(), std::nullopt);
  config.infrequent_interval = 4999ms;
  expect_invalid(config,
                 "infrequent_interval: must be at least frequent_interval (5000 ms), is 4999 ms");
}

TEST(ElectorConfig, ClockSkew) {
  elector_config config = valid();
  config.max_clock_skew.reset();
  EXPECT_EQ(config.validate(), std::nullopt) << "nullopt disables rule (c)";
  config.max_clock_skew = 0ms;
  EXPECT_EQ(config.validate(), std::nullopt);
  config.max_clock_skew = -1ms;
  expect_invalid(config,
                 "max_clock_skew: must be at least 0 (or nullopt to disable rule (c)), is -1 ms");
}

TEST(ElectorConfig, AcquireGraceWithinTheLease) {
  elector_config config = valid();
  config.acquire_grace = 15s;
  EXPECT_EQ(config.validate(), std::nullopt);
  config.acquire_grace = 15001ms;
  expect_invalid(config, "acquire_grace: must be at most lease (15000 ms), is 15001 ms");
  config.acquire_grace = -1ms;
  expect_invalid(config, "acquire_grace: must be at least 0, is -1 ms");
}

TEST(ElectorConfig, RequestTimeoutPositive) {
  elector_config config = valid();
  config.request_timeout = 0ms;
  expect_invalid(config, "request_timeout: must be greater than 0, is 0 ms");
}

TEST(ElectorConfig, RetryPolicyIsValidated) {
  elector_config config = valid();
  config.retry.delays = {100ms, -1ms};
  const auto error = config.validate();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->rfind("retry.delays[1]:", 0), 0u) << *error;
}

TEST(ElectorConfig, RetryScheduleFitsBetweenRenewalAndDeadline) {
  // D - F = 5 s; three attempts and 1.1 s of delays: the timeout may be 1.3 s at most.
  elector_config config = valid();
  config.request_timeout = 1300ms;
  EXPECT_EQ(config.validate(), std::nullopt);
  config.request_timeout = 1301ms;
  expect_invalid(config,
                 "retry: the worst case of one request (5003 ms: 3 attempts of request_timeout "
                 "1301 ms plus the delays) must fit in renew_deadline - frequent_interval "
                 "(5000 ms)");
  config.request_timeout = 2s;  // the brief's first guess does not fit the defaults
  EXPECT_TRUE(config.validate());
  config.retry.delays = {};
  config.request_timeout = 5s;
  EXPECT_EQ(config.validate(), std::nullopt) << "a single attempt may use the whole budget";
}

TEST(ElectorConfig, PeerSettings) {
  elector_config config = valid();
  config.peer.health_path = "health";
  expect_invalid(config, "peer.health_path: must start with '/'");
  config.peer.health_path = "";
  expect_invalid(config, "peer.health_path: must start with '/'");
  config = valid();
  config.peer.timeout = 0ms;
  expect_invalid(config, "peer.timeout: must be greater than 0, is 0 ms");
  config = valid();
  config.peer.key_pin = "sha256:" + std::string(64, 'f');
  EXPECT_EQ(config.validate(), std::nullopt);
  for (const std::string& pin : {"sha256:" + std::string(63, 'f'), "sha256:" + std::string(64, 'F'),
                                 "sha1:" + std::string(64, 'f'), std::string(71, 'f')}) {
    config.peer.key_pin = pin;
    expect_invalid(config, "peer.key_pin: must be empty or 'sha256:' and 64 lowercase hex digits");
  }
}

TEST(ElectorConfig, PeerTlsIsAClientsWithACertificateOnlyTogetherWithItsKey) {
  elector_config config = valid();
  config.peer.tls.certificate_file = "/etc/s3lect/node.pem";
  expect_invalid(config, "peer.tls.private_key_file: a client certificate needs its private key");
  config.peer.tls.private_key_pem = "-----BEGIN PRIVATE KEY-----";
  EXPECT_EQ(config.validate(), std::nullopt);
  config.peer.tls.private_key_file = "/etc/s3lect/node.key";
  expect_invalid(config,
                 "peer.tls.private_key_file: set either it or peer.tls.private_key_pem, not both");
  config.peer.tls.private_key_file.clear();
  config.peer.tls.certificate_pem = "-----BEGIN CERTIFICATE-----";
  expect_invalid(config,
                 "peer.tls.certificate_file: set either it or peer.tls.certificate_pem, not both");
  config = valid();
  config.peer.tls.private_key_file = "/etc/s3lect/node.key";
  expect_invalid(config, "peer.tls.certificate_file: a private key needs its client certificate");
  config = valid();
  config.peer.tls.verify_peer = false;
  expect_invalid(config, "peer.tls.verify_peer: must be on: the leader is always verified");
  config = valid();
  config.peer.tls.require_client_cert = true;
  expect_invalid(config, "peer.tls.require_client_cert: must be off: it is a server's setting");
  config = valid();
  config.peer.tls.ca_file = "/etc/s3lect/ca.pem";
  config.peer.tls.ca_pem = "-----BEGIN CERTIFICATE-----";
  EXPECT_EQ(config.validate(), std::nullopt) << "both CA sources are loaded";
}

TEST(ElectorConfig, ReportsTheFirstOffendingFieldInDeclarationOrder) {
  elector_config config = valid();
  config.server_id.clear();
  config.lease = 0ms;
  config.peer.timeout = 0ms;
  expect_invalid(config, "server_id: must not be empty");
}

TEST(ElectorConfigUpdate, KeepsIdentity) {
  const elector_config current = valid();
  elector_config next = current;
  next.frequent_interval = 2s;
  EXPECT_EQ(validate_update(current, next), std::nullopt);
  next.lock_key = "other";
  EXPECT_EQ(validate_update(current, next), "lock_key: cannot change while running");
  next = current;
  next.server_id = "api-8";
  EXPECT_EQ(validate_update(current, next), "server_id: cannot change while running");
  next = current;
  next.renew_deadline = 20s;
  EXPECT_EQ(validate_update(current, next),
            "renew_deadline: must be less than lease (15000 ms), is 20000 ms");
}

}  // namespace
}  // namespace s3lect

namespace s3lect {
namespace {

using std::chrono::milliseconds;

struct derived_row {
  milliseconds lease, renew_deadline, frequent, infrequent, request_timeout, first_delay,
      second_delay, peer_timeout;
};

// The table of docs/configuration.md ("One knob: the lease"); a change here changes it there.
TEST(ElectorConfigForLease, DerivesTheDefaultProportions) {
  const derived_row table[] = {
      {2s, 1333ms, 666ms, 4s, 133ms, 13ms, 133ms, 400ms},
      {6s, 4s, 2s, 12s, 400ms, 40ms, 400ms, 1200ms},
      {15s, 10s, 5s, 30s, 1s, 100ms, 1s, 3s},
      {60s, 40s, 20s, 120s, 4s, 400ms, 4s, 12s},
      {120s, 80s, 40s, 240s, 8s, 800ms, 8s, 24s},
  };
  for (const derived_row& row : table) {
    SCOPED_TRACE(row.lease.count());
    elector_config config = elector_config::for_lease(row.lease);
    EXPECT_EQ(config.lease, row.lease);
    EXPECT_EQ(config.renew_deadline, row.renew_deadline);
    EXPECT_EQ(config.frequent_interval, row.frequent);
    EXPECT_EQ(config.infrequent_interval, row.infrequent);
    EXPECT_EQ(config.request_timeout, row.request_timeout);
    EXPECT_EQ(config.retry.delays, (std::vector<milliseconds>{row.first_delay, row.second_delay}));
    EXPECT_EQ(config.peer.timeout, row.peer_timeout);
    EXPECT_EQ(config.max_clock_skew, elector_config{}.max_clock_skew) << "not a lease proportion";
    config.lock_key = "k";
    config.server_id = "id";
    EXPECT_EQ(config.validate(), std::nullopt);
  }
}

TEST(ElectorConfigForLease, TheDefaultLeaseGivesTheDefaults) {
  const elector_config derived = elector_config::for_lease(15s);
  const elector_config defaults;
  EXPECT_EQ(derived.renew_deadline, defaults.renew_deadline);
  EXPECT_EQ(derived.frequent_interval, defaults.frequent_interval);
  EXPECT_EQ(derived.infrequent_interval, defaults.infrequent_interval);
  EXPECT_EQ(derived.request_timeout, defaults.request_timeout);
  EXPECT_EQ(derived.retry.delays, defaults.retry.delays);
}

TEST(ElectorConfigForLease, ValidFromFifteenMillisecondsToADay) {
  for (const milliseconds lease : {15ms, 16ms, 1001ms, milliseconds{24h}}) {
    elector_config config = elector_config::for_lease(lease);
    config.lock_key = "k";
    config.server_id = "id";
    EXPECT_EQ(config.validate(), std::nullopt) << lease.count();
  }
  elector_config too_short = elector_config::for_lease(14ms);
  too_short.lock_key = "k";
  too_short.server_id = "id";
  EXPECT_EQ(too_short.validate(), "request_timeout: must be greater than 0, is 0 ms");
}

TEST(ElectorConfigForLease, OutOfRangeLeasesAreNamedByValidate) {
  for (const milliseconds lease :
       {0ms, milliseconds{-5s}, milliseconds{25h}, milliseconds::max()}) {
    elector_config config = elector_config::for_lease(lease);
    config.lock_key = "k";
    config.server_id = "id";
    const auto error = config.validate();
    ASSERT_TRUE(error.has_value()) << lease.count();
    EXPECT_TRUE(error->starts_with("lease: ")) << *error;
  }
}

}  // namespace
}  // namespace s3lect
