// s3_client against the local stores: the Ceph RADOS Gateway over HTTP and HTTPS, and moto (which
// answers as AWS does) over HTTP. Conditional-write races, If-Match semantics, awkward keys and a
// store that vanishes run on every store; authentication (moto checks no signature) and TLS
// failures on the RGW only.
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>
#include <s3lect/store_error.hpp>

#include "s3_endpoint.hpp"
#include "support/local_s3_test.hpp"
#include "support/run_until_complete.hpp"
#include "support/tcp_forwarder.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using test::store_transport;
using namespace std::chrono_literals;

/// A self-signed CA nobody uses: the local store's certificate must not verify against it.
constexpr std::string_view throwaway_ca_pem = R"(-----BEGIN CERTIFICATE-----
MIIBxzCCAW2gAwIBAgIUf8TgCZz4GOulTLkSGayez+qW63IwCgYIKoZIzj0EAwIw
ODE2MDQGA1UEAwwtczNsZWN0IHRocm93YXdheSB0ZXN0IENBICh0cnVzdGVkIGJ5
IG5vdGhpbmcpMCAXDTI2MTEyMTIzNTYxNFoYDzIxMjYxMDI4MjM1NjE0WjA4MTYw
NAYDVQQDDC1zM2xlY3QgdGhyb3dhd2F5IHRlc3QgQ0EgKHRydXN0ZWQgYnkgbm90
aGluZykwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASv6pVGvzdnDVEeXqXsc331
wSeEd+MmjfvfT0YfC/B1OMBZOLQ877WCFsAKY+MU8CQFGJyP0/DpngHydzvXMzck
o1MwUTAdBgNVHQ4EFgQUlzJsgRIDHj6lSYT6I0/wktRaY6UwHwYDVR0jBBgwFoAU
lzJsgRIDHj6lSYT6I0/wktRaY6UwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
AgNIADBFAiAQBlLRpYkKgqWNDkByRw9VWYWBtKJlSzracnd5dEaSrgIhAIWqjufM
NBnlZhoys7xccRq8/kVtnd0QEfyLRKBQLWcC
-----END CERTIFICATE-----
)";

class S3ClientIntegrationBase : public test::local_s3_test {
 protected:
  std::pair<error_code, get_result> get(s3_client& client, const std::string& key) {
    return test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(key, std::move(handler)); });
  }
  std::pair<error_code, put_result> put(s3_client& client, const std::string& key,
                                        const std::string& body, const put_condition& condition) {
    return test::run_until_complete<put_result>(
        io, [&](auto handler) { client.async_put(key, body, condition, std::move(handler)); });
  }
  std::pair<error_code, response_info> remove(s3_client& client, const std::string& key) {
    return test::run_until_complete<response_info>(
        io, [&](auto handler) { client.async_delete(key, std::move(handler)); });
  }

  asio::io_context io;
};

class S3ClientIntegration : public S3ClientIntegrationBase,
                            public ::testing::WithParamInterface<store_transport> {
 protected:
  void SetUp() override { use_store(GetParam().store); }
  s3_config config() const { return s3.config(GetParam().https); }
  bool is_moto() const { return GetParam().store == test::local_store::moto; }
};

std::string store_transport_name(const ::testing::TestParamInfo<store_transport>& info) {
  return test::store_transport_name(info.param);
}

TEST_P(S3ClientIntegration, ConcurrentCreateIfAbsentHasExactlyOneWinner) {
  const std::string key = "it/race-" + test::unique_suffix();
  constexpr int writers = 20;
  // One client per writer, like separate processes: each has its own connection.
  std::vector<std::unique_ptr<s3_client>> clients;
  std::vector<std::string> bodies;
  for (int i = 0; i < writers; ++i) {
    clients.push_back(std::make_unique<s3_client>(io.get_executor(), config()));
    bodies.push_back(R"({"leaderID":"writer-)" + std::to_string(i) + R"(","nonce":")" +
                     test::unique_suffix() + R"("})");
  }
  std::vector<std::optional<std::pair<error_code, put_result>>> results(writers);
  for (int i = 0; i < writers; ++i) {
    clients[i]->async_put(key, bodies[i], put_condition::absent(),
                          [&results, i](error_code ec, put_result result) {
                            results[i].emplace(ec, std::move(result));
                          });
  }
  io.restart();
  io.run();

  s3_client reader(io.get_executor(), config());
  auto [read_ec, current] = get(reader, key);
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(current.found);

  int winners = 0;
  int certain_losers = 0;
  for (int i = 0; i < writers; ++i) {
    ASSERT_TRUE(results[i]) << "writer " << i << " never completed";
    const auto& [ec, result] = *results[i];
    if (!ec) {
      ++winners;
      EXPECT_EQ(current.found->body, bodies[i]) << "the winner's body must be stored";
      EXPECT_EQ(current.found->etag, result.etag);
    } else if (ec == errc::precondition_failed) {
      ++certain_losers;
      EXPECT_NE(current.found->body, bodies[i]);
    } else if (ec == errc::outcome_unknown) {
      // Ceph answers some race losers with 500: re-reading settles it, as the elector does.
      if (current.found->body == bodies[i]) ++winners;
    } else {
      ADD_FAILURE() << "writer " << i << ": unexpected " << ec.message() << " ("
                    << result.info.message << ")";
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_GE(certain_losers, 1);
  EXPECT_FALSE(remove(reader, key).first);
}

TEST_P(S3ClientIntegration, IfMatchWinsOnlyWithTheCurrentEtag) {
  s3_client client(io.get_executor(), config());
  const std::string key = "it/if-match-" + test::unique_suffix();

  auto [create_ec, created] = put(client, key, R"({"v":1})", put_condition::absent());
  ASSERT_FALSE(create_ec) << create_ec.message() << " " << created.info.message;
  ASSERT_FALSE(created.etag.empty());
  EXPECT_EQ(created.etag.find('"'), std::string::npos);

  auto [again_ec, again] = put(client, key, R"({"v":1.5})", put_condition::absent());
  EXPECT_EQ(again_ec, errc::precondition_failed);
  EXPECT_EQ(again.info.http_status, 412u);

  auto [renew_ec, renewed] = put(client, key, R"({"v":2})", put_condition::matches(created.etag));
  ASSERT_FALSE(renew_ec) << renew_ec.message() << " " << renewed.info.message;
  EXPECT_NE(renewed.etag, created.etag);

  auto [stale_ec, stale] = put(client, key, R"({"v":3})", put_condition::matches(created.etag));
  EXPECT_EQ(stale_ec, errc::precondition_failed) << stale_ec.message();

  auto [read_ec, current] = get(client, key);
  ASSERT_FALSE(read_ec) << read_ec.message();
  ASSERT_TRUE(current.found);
  EXPECT_EQ(current.found->body, R"({"v":2})");
  EXPECT_EQ(current.found->etag, renewed.etag);
  EXPECT_TRUE(current.info.server_date);

  EXPECT_FALSE(remove(client, key).first);
  auto [gone_ec, gone] = get(client, key);
  EXPECT_FALSE(gone_ec) << gone_ec.message();
  EXPECT_FALSE(gone.found);
  // Sequential requests share one keep-alive connection; moto (Werkzeug's development server)
  // closes the connection after every answer, so there each request opens its own.
  EXPECT_EQ(client.stats().connections, is_moto() ? 7u : 1u);
}

// Expiry rule (c) dates a record by the store's clock: the GET answer's Date minus the object's
// Last-Modified. The store must send both, and stamp Last-Modified anew on every write.
TEST_P(S3ClientIntegration, AGetIsDatedByTheStoresClockAndEveryWriteRestampsIt) {
  s3_client client(io.get_executor(), config());
  const std::string key = "it/dated-" + test::unique_suffix();
  auto [created_ec, created] = put(client, key, R"({"v":1})", put_condition::absent());
  ASSERT_FALSE(created_ec) << created_ec.message();
  auto [first_ec, first] = get(client, key);
  ASSERT_FALSE(first_ec) << first_ec.message();
  ASSERT_TRUE(first.found);
  ASSERT_TRUE(first.found->last_modified) << "no Last-Modified: rule (c) would be off";
  ASSERT_TRUE(first.info.server_date);
  const auto age = *first.info.server_date - *first.found->last_modified;
  // The radosgw's Date may read a second before the Last-Modified of a write it made just
  // before: its Date comes from a clock that lags by a few ms (a coarse clock), so a write and a
  // read around a second's boundary can show -1 s. Rule (c) allows 2 s for the two headers.
  EXPECT_GE(age, -1s);
  EXPECT_LE(age, 2s) << "written just now, by the store's own clock";
  // Over a second of the store's clock later (real time must pass: no fake clock in a real
  // store), a conditional overwrite: Last-Modified moves on.
  std::this_thread::sleep_for(1100ms);
  auto [renew_ec, renewed] = put(client, key, R"({"v":2})", put_condition::matches(created.etag));
  ASSERT_FALSE(renew_ec) << renew_ec.message();
  auto [second_ec, second] = get(client, key);
  ASSERT_FALSE(second_ec) << second_ec.message();
  ASSERT_TRUE(second.found && second.found->last_modified);
  EXPECT_GT(*second.found->last_modified, *first.found->last_modified);
  EXPECT_FALSE(remove(client, key).first);
}

TEST_P(S3ClientIntegration, IfMatchOnMissingKeyIsPreconditionFailed) {
  s3_client client(io.get_executor(), config());
  const std::string key = "it/missing-" + test::unique_suffix();

  auto [ec, result] =
      put(client, key, "{}", put_condition::matches("d41d8cd98f00b204e9800998ecf8427e"));

  // Both mean "not the object you expected": AWS and moto answer 404 NoSuchKey, the RGW 412.
  EXPECT_EQ(ec, errc::precondition_failed) << ec.message();
  if (is_moto()) {
    EXPECT_EQ(result.info.http_status, 404u);
    EXPECT_EQ(result.info.error_code, "NoSuchKey");
  } else {
    EXPECT_EQ(result.info.http_status, 412u);
  }
  auto [read_ec, read] = get(client, key);
  EXPECT_FALSE(read_ec);
  EXPECT_FALSE(read.found);
}

// The client sends ETags unquoted, as both stores accept; a quoted one is where they differ: AWS
// and moto strip the quotes, the RGW compares them and refuses.
TEST_P(S3ClientIntegration, QuotedEtagInIfMatchIsAcceptedByMotoOnly) {
  s3_client client(io.get_executor(), config());
  const std::string key = "it/quoted-" + test::unique_suffix();
  auto [create_ec, created] = put(client, key, R"({"v":1})", put_condition::absent());
  ASSERT_FALSE(create_ec) << create_ec.message();

  const auto quoted = put_condition::matches("\"" + created.etag + "\"");
  auto [ec, result] = put(client, key, R"({"v":2})", quoted);

  if (is_moto()) {
    EXPECT_FALSE(ec) << ec.message();
  } else {
    EXPECT_EQ(ec, errc::precondition_failed) << ec.message();
    EXPECT_EQ(result.info.http_status, 412u);
  }
  EXPECT_FALSE(remove(client, key).first);
}

TEST_P(S3ClientIntegration, AwkwardKeysRoundTrip) {
  s3_client client(io.get_executor(), config());
  const std::string suffix = test::unique_suffix();
  const std::vector<std::string> keys = {
      "it/awkward/space in name " + suffix,
      "it/awkward/ünïcødé-ключ-鍵 " + suffix,
      "it/awkward/plus+equals=amp&tilde~" + suffix,
      "it/awkward/nested/deeper/still/deeper/" + suffix + ".json",
      "it/awkward/semi;colon,comma:colon@at!bang'quote(paren)*star$dollar" + suffix,
      "it/awkward/percent%20literal%2F" + suffix,
  };
  for (const auto& key : keys) {
    SCOPED_TRACE(key);
    const std::string body = R"({"key":")" + std::to_string(key.size()) + R"("})";
    auto [put_ec, written] = put(client, key, body, put_condition::absent());
    ASSERT_FALSE(put_ec) << put_ec.message() << " " << written.info.error_code << " "
                         << written.info.message;
    auto [get_ec, read] = get(client, key);
    ASSERT_FALSE(get_ec) << get_ec.message();
    ASSERT_TRUE(read.found);
    EXPECT_EQ(read.found->body, body);
    EXPECT_EQ(read.found->etag, written.etag);
    auto [match_ec, rewritten] = put(client, key, body + " ", put_condition::matches(written.etag));
    EXPECT_FALSE(match_ec) << match_ec.message();
    EXPECT_FALSE(remove(client, key).first);
  }
}

TEST_P(S3ClientIntegration, MissingBucketIsNoSuchBucket) {
  auto wrong = config();
  wrong.bucket = "s3lect-no-such-bucket-" + test::unique_suffix().substr(0, 12);
  s3_client client(io.get_executor(), wrong);

  auto [ec, result] = get(client, "it/any");

  EXPECT_EQ(ec, errc::no_such_bucket) << ec.message() << " " << result.info.error_code;
}

asio::awaitable<void> get_with_default_token(s3_client& client, std::string key,
                                             std::exception_ptr& failure, bool& done) {
  try {
    (void)co_await client.async_get(std::move(key));
  } catch (...) {
    failure = std::current_exception();
  }
  done = true;
}

// What a program meets: `co_await client.async_get(key)` with the default token throws an
// s3lect::store_error that names the store's own error code, not only the library's.
TEST_P(S3ClientIntegration, MissingBucketWithTheDefaultTokenThrowsAStoreErrorWithTheS3Code) {
  auto wrong = config();
  wrong.bucket = "s3lect-no-such-bucket-" + test::unique_suffix().substr(0, 12);
  s3_client client(io.get_executor(), wrong);
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, get_with_default_token(client, "it/any", failure, done), asio::detached);
  io.restart();
  while (!done && io.run_one_for(60s) != 0) {
  }
  ASSERT_TRUE(done) << "the GET never completed";
  ASSERT_TRUE(failure) << "a GET from a missing bucket must throw";
  try {
    std::rethrow_exception(failure);
  } catch (const store_error& e) {
    EXPECT_EQ(e.code(), errc::no_such_bucket) << e.what();
    EXPECT_EQ(e.info().error_code, "NoSuchBucket") << e.what();
    EXPECT_EQ(e.info().http_status, 404u) << e.what();
    EXPECT_NE(std::string(e.what()).find("NoSuchBucket"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    FAIL() << "not a store_error: " << e.what();
  }
}

TEST_P(S3ClientIntegration, VanishedServerFailsFastWithoutHanging) {
  std::string problem;
  const auto endpoint = detail::parse_endpoint_url(config().endpoint, problem);
  ASSERT_TRUE(endpoint) << problem;
  test::tcp_forwarder forwarder(endpoint->host, endpoint->port);
  auto via_forwarder = config();
  via_forwarder.endpoint = std::string(GetParam().https ? "https" : "http") +
                           "://127.0.0.1:" + std::to_string(forwarder.port());
  via_forwarder.request_timeout = 5s;
  s3_client client(io.get_executor(), via_forwarder);
  const std::string key = "it/vanish-" + test::unique_suffix();

  auto [first_ec, first] = get(client, key);
  ASSERT_FALSE(first_ec) << first_ec.message() << " " << first.info.message;
  EXPECT_FALSE(first.found);

  forwarder.stop();
  std::this_thread::sleep_for(50ms);  // let the FIN of the pooled connection arrive

  const auto started = std::chrono::steady_clock::now();
  auto [ec, result] = get(client, key);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(ec == errc::connect_failed || ec == errc::connection_lost) << ec.message();
  EXPECT_TRUE(is_transient(ec));
  EXPECT_LT(elapsed, 4s);

  // Never sent, so not ambiguous: a PUT that cannot connect is not an unknown outcome.
  auto [put_ec, put_reply] = put(client, key, "{}", put_condition::absent());
  EXPECT_EQ(put_ec, errc::connect_failed) << put_ec.message();
}

INSTANTIATE_TEST_SUITE_P(Stores, S3ClientIntegration,
                         ::testing::ValuesIn(test::every_store_transport), store_transport_name);

// --- signatures: the RGW only (moto accepts any signature and any access key) ---------------

using S3ClientAuthentication = S3ClientIntegration;

TEST_P(S3ClientAuthentication, WrongSecretIsSignatureMismatch) {
  auto wrong = config();
  wrong.creds.secret_access_key = "definitely-not-the-secret-key-0000000000";
  s3_client client(io.get_executor(), wrong);

  auto [ec, result] = get(client, "it/signature-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::signature_mismatch) << ec.message();
  EXPECT_EQ(result.info.http_status, 403u);
  EXPECT_EQ(result.info.error_code, "SignatureDoesNotMatch");
}

TEST_P(S3ClientAuthentication, UnknownAccessKeyIsInvalidAccessKey) {
  auto wrong = config();
  wrong.creds.access_key_id = "NOSUCHACCESSKEY";
  s3_client client(io.get_executor(), wrong);

  auto [ec, result] = get(client, "it/access-key-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::invalid_access_key) << ec.message() << " " << result.info.error_code;
}

INSTANTIATE_TEST_SUITE_P(Stores, S3ClientAuthentication,
                         ::testing::Values(store_transport{test::local_store::rgw, false},
                                           store_transport{test::local_store::rgw, true}),
                         store_transport_name);

// --- TLS only ------------------------------------------------------------------------------

using S3ClientTls = S3ClientIntegrationBase;

TEST_F(S3ClientTls, UntrustedCertificateIsVerificationFailure) {
  auto config = s3.config(true);
  config.tls.ca_file.clear();
  config.tls.ca_pem = std::string(throwaway_ca_pem);
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::tls_verification_failed) << ec.message() << " " << result.info.message;
  // The detail says why, and does not repeat what the error already says: readers print
  // "<error>: <detail>".
  EXPECT_EQ(result.info.message, "unable to get local issuer certificate");
  EXPECT_FALSE(is_transient(ec));
}

TEST_F(S3ClientTls, SystemRootsDoNotTrustTheLocalCa) {
  auto config = s3.config(true);
  config.tls.ca_file.clear();
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::tls_verification_failed) << ec.message() << " " << result.info.message;
}

TEST_F(S3ClientTls, HostNameIsVerifiedAgainstDnsNames) {
  // The local certificate names IP 127.0.0.1 and DNS localhost; this takes the name path (SNI,
  // X509_check_host) instead of the IP one.
  auto config = s3.config(true);
  std::string problem;
  const auto https = detail::parse_endpoint_url(s3.https_endpoint, problem);
  ASSERT_TRUE(https) << problem;
  config.endpoint = "https://localhost:" + std::to_string(https->port);
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_FALSE(ec) << ec.message() << " " << result.info.message;
}

TEST_F(S3ClientTls, CertificateForAnotherIpIsVerificationFailure) {
  // Reach the store as 127.0.0.2: the certificate is valid, from the right CA, for 127.0.0.1.
  std::string problem;
  const auto https = detail::parse_endpoint_url(s3.https_endpoint, problem);
  ASSERT_TRUE(https) << problem;
  test::tcp_forwarder forwarder(https->host, https->port, "127.0.0.2");
  auto config = s3.config(true);
  config.endpoint = "https://127.0.0.2:" + std::to_string(forwarder.port());
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::tls_verification_failed) << ec.message() << " " << result.info.message;
  EXPECT_NE(result.info.message.find("IP address mismatch"), std::string::npos)
      << result.info.message;
}

TEST_F(S3ClientTls, CaGivenAsPemTextVerifies) {
  auto config = s3.config(true);
  // The right CA as text, plus an unrelated one: a list of several certificates is accepted.
  std::string pem;
  {
    std::FILE* file = std::fopen(config.tls.ca_file.c_str(), "r");
    ASSERT_NE(file, nullptr) << config.tls.ca_file;
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) pem.append(chunk, n);
    std::fclose(file);
  }
  config.tls.ca_file.clear();
  config.tls.ca_pem = std::string(throwaway_ca_pem) + pem;
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_FALSE(ec) << ec.message() << " " << result.info.message;
}

TEST_F(S3ClientTls, PlainHttpToTheTlsPortIsHandshakeFailure) {
  // The reverse (TLS client, plain server) must not pass for a verification problem either.
  auto config = s3.config(true);
  std::string problem;
  const auto http = detail::parse_endpoint_url(s3.http_endpoint, problem);
  ASSERT_TRUE(http) << problem;
  config.endpoint = "https://127.0.0.1:" + std::to_string(http->port);
  config.request_timeout = 5s;
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "it/tls-" + test::unique_suffix());

  EXPECT_EQ(ec, errc::tls_handshake_failed) << ec.message() << " " << result.info.message;
  EXPECT_FALSE(result.info.message.empty());
  EXPECT_EQ(result.info.message.find(ec.message()), std::string::npos) << result.info.message;
}

}  // namespace
}  // namespace s3lect
