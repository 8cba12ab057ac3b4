// s3_client against a scripted loopback HTTP server: request shape and signing, reply mapping,
// keep-alive and reconnection, transport failures, timeouts and cancellation.
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "sigv4.hpp"
#include "support/read_cancellation_race.hpp"
#include "support/run_until_complete.hpp"
#include "support/scripted_http_server.hpp"

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;
using test::http_reply;
using test::recorded_request;
using test::s3_error_reply;
using test::scripted_http_server;
using test::scripted_reply;

constexpr std::string_view secret = "s3cr3t-never-logged";

class S3ClientTest : public ::testing::Test {
 protected:
  s3_config config_for(const std::string& endpoint) {
    s3_config config;
    config.bucket = "test-bucket";
    config.endpoint = endpoint;
    config.region = "us-east-1";
    config.creds.access_key_id = "AKIDTEST";
    config.creds.secret_access_key = std::string(secret);
    config.request_timeout = 2s;
    return config;
  }

  /// Constructing a client with `config` throws invalid_config with `field` in its message.
  void expect_invalid_config_naming(const s3_config& config, const std::string& field) {
    try {
      s3_client client(io.get_executor(), config);
      FAIL() << "no exception";
    } catch (const boost::system::system_error& e) {
      EXPECT_EQ(e.code(), errc::invalid_config);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }

  template <class Result, class Start>
  std::pair<error_code, Result> run(Start start) {
    return test::run_until_complete<Result>(io, std::move(start));
  }

  std::pair<error_code, get_result> get(s3_client& client, std::string key) {
    return run<get_result>([&](auto handler) { client.async_get(key, std::move(handler)); });
  }
  std::pair<error_code, put_result> put(s3_client& client, std::string key, std::string body,
                                        put_condition condition) {
    return run<put_result>(
        [&](auto handler) { client.async_put(key, body, condition, std::move(handler)); });
  }
  std::pair<error_code, response_info> remove(s3_client& client, std::string key) {
    return run<response_info>([&](auto handler) { client.async_delete(key, std::move(handler)); });
  }

  asio::io_context io;
};

scripted_http_server::script always(scripted_reply reply) {
  return [reply](const recorded_request&) { return reply; };
}

// --- GET -----------------------------------------------------------------------------------

TEST_F(S3ClientTest, GetReturnsBodyAndNormalisedEtag) {
  scripted_http_server server(always(http_reply(
      200, R"({"leaderID":"a"})",
      {"ETag: \"0123abcd\"", "Date: Sun, 06 Nov 1994 08:49:37 GMT", "x-amz-request-id: rid-42"})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "locks/leader.json");

  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.found->body, R"({"leaderID":"a"})");
  EXPECT_EQ(result.found->etag, "0123abcd");
  EXPECT_EQ(result.info.http_status, 200u);
  EXPECT_EQ(result.info.request_id, "rid-42");
  ASSERT_TRUE(result.info.server_date);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*result.info.server_date), 784111777);
  EXPECT_GT(result.info.round_trip.count(), 0);

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target, "/test-bucket/locks/leader.json");
  EXPECT_EQ(requests[0].header("Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(requests[0].header("x-amz-content-sha256"), detail::sha256_hex(""));
  EXPECT_EQ(requests[0].header("If-Match"), "");
  EXPECT_EQ(requests[0].header("If-None-Match"), "");
}

TEST_F(S3ClientTest, GetOfMissingKeyIsNotFoundWithoutError) {
  scripted_http_server server(always(s3_error_reply(404, "NoSuchKey")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "absent");

  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(result.found);
  EXPECT_EQ(result.info.http_status, 404u);
  EXPECT_EQ(result.info.error_code, "NoSuchKey");
}

TEST_F(S3ClientTest, BareNotFoundIsNotAnS3StoreNotAMissingKey) {
  scripted_http_server server(always(http_reply(404, "<html>Not Found</html>")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "absent");

  EXPECT_EQ(ec, errc::bad_request) << ec.message();
  EXPECT_FALSE(result.found);
  EXPECT_NE(result.info.message.find("does not answer like S3"), std::string::npos)
      << result.info.message;
}

TEST_F(S3ClientTest, NotFoundWithOnlyARequestIdIsAMissingKey) {
  // A HEAD-like 404 without a body, as S3 answers some requests: the request id shows it is S3.
  scripted_http_server server(always(http_reply(404, "", {"x-amz-request-id: rid-404"})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "absent");

  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(result.found);
}

TEST_F(S3ClientTest, GetOfMissingBucketIsNoSuchBucket) {
  scripted_http_server server(always(s3_error_reply(404, "NoSuchBucket")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::no_such_bucket);
  EXPECT_FALSE(result.found);
}

TEST_F(S3ClientTest, GetServerErrorIsServerError) {
  scripted_http_server server(always(s3_error_reply(500, "InternalError", "boom", "rid-500")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::server_error);
  EXPECT_EQ(result.info.http_status, 500u);
  EXPECT_EQ(result.info.error_code, "InternalError");
  EXPECT_EQ(result.info.message, "boom");
  EXPECT_EQ(result.info.request_id, "rid-500");
  EXPECT_TRUE(is_transient(ec));
}

TEST_F(S3ClientTest, GetWithoutEtagIsProtocolError) {
  scripted_http_server server(always(http_reply(200, "{}")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::protocol_error);
}

// --- PUT -----------------------------------------------------------------------------------

TEST_F(S3ClientTest, PutIfAbsentSendsSignedConditionalRequest) {
  scripted_http_server server(always(http_reply(200, "", {"ETag: \"new-etag\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));
  const std::string body = R"({"leaderID":"me","nonce":"n1"})";

  auto [ec, result] = put(client, "lock", body, put_condition::absent());

  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.etag, "new-etag");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const recorded_request& request = requests[0];
  EXPECT_EQ(request.method, "PUT");
  EXPECT_EQ(request.target, "/test-bucket/lock");
  EXPECT_EQ(request.body, body);
  EXPECT_EQ(request.header("If-None-Match"), "*");
  EXPECT_EQ(request.header("If-Match"), "");
  EXPECT_EQ(request.header("Content-Type"), "application/json");
  EXPECT_EQ(request.header("Content-Length"), std::to_string(body.size()));
  EXPECT_EQ(request.header("x-amz-content-sha256"), detail::sha256_hex(body));
  EXPECT_EQ(request.header("x-amz-date").size(), 16u);
  EXPECT_EQ(request.header("x-amz-security-token"), "");
  const std::string authorization = request.header("Authorization");
  EXPECT_TRUE(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/")) << authorization;
  EXPECT_NE(authorization.find("/us-east-1/s3/aws4_request"), std::string::npos);
  EXPECT_NE(authorization.find("if-none-match"), std::string::npos);
  EXPECT_NE(authorization.find("x-amz-content-sha256"), std::string::npos);
  EXPECT_EQ(authorization.find(secret), std::string::npos);
}

TEST_F(S3ClientTest, PutIfMatchSendsEtagUnquotedAndSessionToken) {
  scripted_http_server server(always(http_reply(200, "", {"ETag: W/\"etag-2\""})));
  auto config = config_for(server.endpoint());
  config.creds.session_token = "session-token-1";
  s3_client client(io.get_executor(), config);

  auto [ec, result] = put(client, "lock", "{}", put_condition::matches("etag-1"));

  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(result.etag, "etag-2");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].header("If-Match"), "etag-1");
  EXPECT_EQ(requests[0].header("If-None-Match"), "");
  EXPECT_EQ(requests[0].header("x-amz-security-token"), "session-token-1");
  EXPECT_NE(requests[0].header("Authorization").find("x-amz-security-token"), std::string::npos);
}

struct put_case {
  const char* name;
  scripted_reply reply;
  put_condition condition;
  errc expected;
};

TEST_F(S3ClientTest, PutRepliesMapToErrorCodes) {
  const std::vector<put_case> cases = {
      {"412", s3_error_reply(412, "PreconditionFailed"), put_condition::absent(),
       errc::precondition_failed},
      {"404 on If-Match", s3_error_reply(404, "NoSuchKey"), put_condition::matches("e"),
       errc::precondition_failed},
      {"409", s3_error_reply(409, "ConditionalRequestConflict"), put_condition::matches("e"),
       errc::conflict},
      {"500", s3_error_reply(500, "UnknownError"), put_condition::matches("e"),
       errc::outcome_unknown},
      {"503 without SlowDown", s3_error_reply(503, "ServiceUnavailable"), put_condition::absent(),
       errc::outcome_unknown},
      {"503 SlowDown", s3_error_reply(503, "SlowDown"), put_condition::absent(),
       errc::outcome_unknown},
      {"429", http_reply(429), put_condition::absent(), errc::throttled},
      {"403 SignatureDoesNotMatch", s3_error_reply(403, "SignatureDoesNotMatch"),
       put_condition::absent(), errc::signature_mismatch},
      {"403 InvalidAccessKeyId", s3_error_reply(403, "InvalidAccessKeyId"), put_condition::absent(),
       errc::invalid_access_key},
      {"403 RequestTimeTooSkewed", s3_error_reply(403, "RequestTimeTooSkewed"),
       put_condition::absent(), errc::clock_skewed},
      {"403 AccessDenied", s3_error_reply(403, "AccessDenied"), put_condition::absent(),
       errc::access_denied},
      {"400", s3_error_reply(400, "InvalidArgument"), put_condition::absent(), errc::bad_request},
      {"404 NoSuchBucket", s3_error_reply(404, "NoSuchBucket"), put_condition::matches("e"),
       errc::no_such_bucket},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    scripted_http_server server(always(c.reply));
    s3_client client(io.get_executor(), config_for(server.endpoint()));
    auto [ec, result] = put(client, "lock", "{}", c.condition);
    EXPECT_EQ(ec, c.expected) << ec.message();
    EXPECT_TRUE(result.etag.empty());
  }
}

TEST_F(S3ClientTest, PutErrorCarriesResponseInfo) {
  scripted_http_server server(
      always(s3_error_reply(403, "SignatureDoesNotMatch", "The signature differs", "rid-403")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = put(client, "lock", "{}", put_condition::absent());

  EXPECT_EQ(ec, errc::signature_mismatch);
  EXPECT_EQ(result.info.http_status, 403u);
  EXPECT_EQ(result.info.error_code, "SignatureDoesNotMatch");
  EXPECT_EQ(result.info.message, "The signature differs");
  EXPECT_EQ(result.info.request_id, "rid-403");
  EXPECT_FALSE(is_transient(ec));
}

TEST_F(S3ClientTest, InvalidArgumentsFailWithoutARequest) {
  scripted_http_server server(always(http_reply(200, "", {"ETag: \"e\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_EQ(get(client, "").first, asio::error::invalid_argument);
  EXPECT_EQ(put(client, "k", "{}", put_condition::matches("")).first,
            asio::error::invalid_argument);
  EXPECT_EQ(put(client, "k", "{}", put_condition::matches("a\r\nX-Evil: 1")).first,
            asio::error::invalid_argument);
  EXPECT_TRUE(server.requests().empty());
}

// --- DELETE --------------------------------------------------------------------------------

TEST_F(S3ClientTest, DeleteAcceptsNoContentAndMissingKey) {
  scripted_http_server server([](const recorded_request& request) {
    return request.sequence == 0 ? http_reply(204) : s3_error_reply(404, "NoSuchKey");
  });
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec1, info1] = remove(client, "k");
  auto [ec2, info2] = remove(client, "k");

  EXPECT_FALSE(ec1) << ec1.message();
  EXPECT_EQ(info1.http_status, 204u);
  EXPECT_FALSE(ec2) << ec2.message();
  EXPECT_EQ(info2.http_status, 404u);
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[0].method, "DELETE");
  EXPECT_EQ(client.stats().deletes, 2u);
}

// --- connections ---------------------------------------------------------------------------

TEST_F(S3ClientTest, KeepAliveReusesOneConnection) {
  scripted_http_server server(always(http_reply(200, "x", {"ETag: \"e\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  EXPECT_FALSE(get(client, "b").first);
  EXPECT_FALSE(put(client, "c", "{}", put_condition::absent()).first);

  EXPECT_EQ(client.stats().connections, 1u);
  EXPECT_EQ(server.connections_accepted(), 1u);
  EXPECT_EQ(client.stats().gets, 2u);
  EXPECT_EQ(client.stats().puts, 1u);
  EXPECT_EQ(client.stats().failures, 0u);
}

TEST_F(S3ClientTest, IdleConnectionClosedByServerIsReplaced) {
  // The server closes every connection right after its reply, without "Connection: close".
  scripted_http_server server(
      always(http_reply(200, "x", {"ETag: \"e\""}, scripted_reply::then::close)));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  ASSERT_TRUE(server.wait_for_closed(1, 5000ms));  // the server closed: its FIN is sent
  auto [ec, result] = get(client, "b");

  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(result.found);
  EXPECT_EQ(client.stats().connections, 2u);
}

// Answers every request with 200 and ETag "e", but closes the first connection instead of
// answering its second request.
scripted_reply close_instead_of_answering_the_second_request(const recorded_request& request) {
  if (request.connection == 0 && request.sequence == 1) return test::drop_connection();
  return http_reply(200, "x", {"ETag: \"e\""});
}

TEST_F(S3ClientTest, ConnectionClosedOnReuseIsResentForGet) {
  // The second request on the first connection meets a server that closes instead of answering
  // (the race between the client's idle check and the server's idle timeout).
  scripted_http_server server(close_instead_of_answering_the_second_request);
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  auto [ec, result] = get(client, "b");

  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(result.found);
  EXPECT_EQ(client.stats().connections, 2u);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(S3ClientTest, ConnectionClosedOnReuseAfterPutWasWrittenIsOutcomeUnknown) {
  scripted_http_server server(close_instead_of_answering_the_second_request);
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  auto [ec, result] = put(client, "lock", "{}", put_condition::matches("e"));

  // The server read the whole PUT: it may have applied it, so it is not resent.
  EXPECT_EQ(ec, errc::outcome_unknown) << ec.message();
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(client.stats().failures, 1u);
}

TEST_F(S3ClientTest, ConnectionClosedBeforeReplyOnFreshConnectionIsConnectionLost) {
  scripted_http_server server(always(test::drop_connection()));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_EQ(get(client, "a").first, errc::connection_lost);
  EXPECT_EQ(put(client, "a", "{}", put_condition::absent()).first, errc::outcome_unknown);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(S3ClientTest, CloseIdleConnectionsForcesNewConnection) {
  scripted_http_server server(always(http_reply(200, "x", {"ETag: \"e\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  client.close_idle_connections();
  EXPECT_FALSE(get(client, "b").first);

  EXPECT_EQ(client.stats().connections, 2u);
}

TEST_F(S3ClientTest, ConnectionCloseReplyIsNotPooled) {
  scripted_http_server server(always(
      http_reply(200, "x", {"ETag: \"e\"", "Connection: close"}, scripted_reply::then::close)));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_FALSE(get(client, "a").first);
  EXPECT_FALSE(get(client, "b").first);

  EXPECT_EQ(client.stats().connections, 2u);
  EXPECT_EQ(server.requests().size(), 2u);
}

// --- malformed replies ---------------------------------------------------------------------

TEST_F(S3ClientTest, GarbageReplyIsProtocolError) {
  scripted_reply garbage;
  garbage.raw = "SSH-2.0-OpenSSH_9.2\r\nthis is not HTTP\r\n\r\n";
  garbage.after = scripted_reply::then::close;
  scripted_http_server server(always(garbage));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::protocol_error) << ec.message();
  EXPECT_FALSE(result.info.message.empty());
}

TEST_F(S3ClientTest, TruncatedBodyIsProtocolError) {
  scripted_reply truncated;
  truncated.raw = "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nContent-Length: 100\r\n\r\nonly a part";
  truncated.after = scripted_reply::then::close;
  scripted_http_server server(always(truncated));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_EQ(get(client, "k").first, errc::protocol_error);
  // The same on a PUT cannot tell whether the write happened.
  EXPECT_EQ(put(client, "k", "{}", put_condition::absent()).first, errc::outcome_unknown);
}

TEST_F(S3ClientTest, OversizedHeaderIsProtocolError) {
  scripted_http_server server(
      always(http_reply(200, "", {"ETag: \"e\"", "X-Padding: " + std::string(100000, 'p')})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  EXPECT_EQ(get(client, "k").first, errc::protocol_error);
}

// --- timeouts, cancellation, unreachable servers -------------------------------------------

TEST_F(S3ClientTest, SilentServerTimesOut) {
  scripted_http_server server(always(test::never_answer()));
  auto config = config_for(server.endpoint());
  config.request_timeout = 300ms;
  s3_client client(io.get_executor(), config);

  const auto started = std::chrono::steady_clock::now();
  auto [ec, result] = get(client, "k");
  const auto elapsed = std::chrono::steady_clock::now() - started;

  EXPECT_EQ(ec, errc::timeout) << ec.message();
  EXPECT_GE(elapsed, 290ms);
  EXPECT_LT(elapsed, 1300ms);
  EXPECT_TRUE(is_transient(ec));
}

TEST_F(S3ClientTest, PutTimingOutAfterItWasSentIsOutcomeUnknown) {
  scripted_http_server server(always(test::never_answer()));
  auto config = config_for(server.endpoint());
  config.request_timeout = 300ms;
  s3_client client(io.get_executor(), config);

  auto [ec, result] = put(client, "k", "{}", put_condition::absent());

  EXPECT_EQ(ec, errc::outcome_unknown) << ec.message();
  EXPECT_FALSE(result.info.message.empty());
}

TEST_F(S3ClientTest, CancelledGetCompletesWithOperationAbortedAndClientStillWorks) {
  std::atomic<int> seen{0};
  scripted_http_server server([&seen](const recorded_request&) {
    if (seen++ == 0) return test::never_answer();
    return http_reply(200, "ok", {"ETag: \"e\""});
  });
  s3_client client(io.get_executor(), config_for(server.endpoint()));

  asio::cancellation_signal signal;
  asio::steady_timer trigger(io, 100ms);
  trigger.async_wait([&signal](error_code) { signal.emit(asio::cancellation_type::terminal); });
  const auto started = std::chrono::steady_clock::now();
  auto [ec, result] = run<get_result>([&](auto handler) {
    client.async_get("k", asio::bind_cancellation_slot(signal.slot(), std::move(handler)));
  });
  const auto elapsed = std::chrono::steady_clock::now() - started;

  EXPECT_EQ(ec, asio::error::operation_aborted) << ec.message();
  EXPECT_LT(elapsed, 1500ms);

  auto [ec2, result2] = get(client, "k");
  EXPECT_FALSE(ec2) << ec2.message();
  ASSERT_TRUE(result2.found);
  EXPECT_EQ(result2.found->body, "ok");
}

/// Awaits a GET with the default token, then races a GET against a timer with operator||.
asio::awaitable<void> await_get_then_race(s3_client& client, std::string& first_body,
                                          std::size_t& race_winner) {
  get_result first = co_await client.async_get("first");
  first_body = first.found ? first.found->body : "<missing>";
  asio::steady_timer timer(co_await asio::this_coro::executor, 150ms);
  using namespace asio::experimental::awaitable_operators;
  auto raced = co_await (client.async_get("second") || timer.async_wait(asio::use_awaitable));
  race_winner = raced.index();
}

TEST_F(S3ClientTest, DefaultTokenAwaitsAndOrOperatorCancelsTheLoser) {
  scripted_http_server server([](const recorded_request& request) {
    if (request.target.ends_with("/first")) return http_reply(200, "one", {"ETag: \"e\""});
    return test::never_answer();
  });
  s3_client client(io.get_executor(), config_for(server.endpoint()));
  std::string first_body;
  std::size_t race_winner = 99;
  std::exception_ptr failure;

  asio::co_spawn(io, await_get_then_race(client, first_body, race_winner),
                 [&failure](std::exception_ptr e) { failure = e; });
  const auto started = std::chrono::steady_clock::now();
  io.run();
  const auto elapsed = std::chrono::steady_clock::now() - started;

  EXPECT_FALSE(failure);
  EXPECT_EQ(first_body, "one");
  EXPECT_EQ(race_winner, 1u);  // the timer; the GET was cancelled instead of running to 2 s
  EXPECT_LT(elapsed, 1500ms);
  EXPECT_EQ(client.stats().failures, 1u);
}

TEST_F(S3ClientTest, DefaultTokenThrowsSystemError) {
  scripted_http_server server(always(s3_error_reply(412, "PreconditionFailed")));
  s3_client client(io.get_executor(), config_for(server.endpoint()));
  std::exception_ptr failure;

  asio::co_spawn(
      io,
      [](s3_client& c) -> asio::awaitable<void> {
        co_await c.async_put("k", "{}", put_condition::absent());
      }(client),
      [&failure](std::exception_ptr e) { failure = e; });
  io.run();

  ASSERT_TRUE(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::precondition_failed);
  }
}

TEST_F(S3ClientTest, RefusedPortIsConnectFailed) {
  std::uint16_t port = 0;
  {
    asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }  // closed again: connecting is refused
  s3_client client(io.get_executor(), config_for("http://127.0.0.1:" + std::to_string(port)));

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::connect_failed) << ec.message();
  EXPECT_EQ(result.info.http_status, 0u);
  EXPECT_FALSE(result.info.message.empty());
  EXPECT_EQ(client.stats().connections, 0u);
  EXPECT_EQ(client.stats().failures, 1u);
}

TEST_F(S3ClientTest, UnresolvableHostIsResolveFailed) {
  auto config = config_for("http://no-such-host.invalid");
  config.request_timeout = 20s;
  s3_client client(io.get_executor(), config);

  auto [ec, result] = get(client, "k");

  EXPECT_EQ(ec, errc::resolve_failed) << ec.message() << ": " << result.info.message;
}

TEST_F(S3ClientTest, ClientWorksWithIoContextOnSeveralThreads) {
  scripted_http_server server(always(http_reply(200, "x", {"ETag: \"e\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));
  constexpr int requests = 40;
  std::atomic<int> succeeded{0};
  std::atomic<int> completed{0};
  for (int i = 0; i < requests; ++i) {
    client.async_get("k" + std::to_string(i), [&](error_code ec, get_result) {
      if (!ec) ++succeeded;
      ++completed;
    });
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([this] { io.run(); });
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(completed, requests);
  EXPECT_EQ(succeeded, requests);
  EXPECT_LE(client.stats().connections, static_cast<std::uint64_t>(requests));
}

/// The threads of this process, from /proc/self/task.
std::size_t thread_count() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// An endpoint given as an IP literal is connected to without Asio's asynchronous resolve, which
// runs getaddrinfo on a thread of its own: the application's threads are the only ones (and
// the connect starts at once, not after another thread was scheduled).
TEST_F(S3ClientTest, ARequestToAnIpLiteralStartsNoThread) {
  const std::size_t before = thread_count();
  s3_client client(io.get_executor(), config_for("http://127.0.0.1:1"));
  const auto [ec, result] = get(client, "k");
  EXPECT_EQ(ec, errc::connect_failed) << ec.message() << " " << result.info.message;
  EXPECT_EQ(thread_count(), before);
}

// --- construction, logging -----------------------------------------------------------------

TEST_F(S3ClientTest, InvalidConfigThrowsNamingTheField) {
  auto config = config_for("ftp://127.0.0.1");
  expect_invalid_config_naming(config, "endpoint:");
}

TEST_F(S3ClientTest, UnreadableCaFileThrowsInvalidConfig) {
  auto config = config_for("https://127.0.0.1:1");
  config.tls.ca_file = "/nonexistent/ca.pem";
  expect_invalid_config_naming(config, "tls.ca_file");
}

TEST_F(S3ClientTest, DebugLogNamesRequestsButNeverSecrets) {
  scripted_http_server server([](const recorded_request& request) {
    return request.method == "GET" ? http_reply(200, "x", {"ETag: \"e\""})
                                   : s3_error_reply(412, "PreconditionFailed");
  });
  auto config = config_for(server.endpoint());
  config.creds.session_token = "token-never-logged";
  std::vector<std::string> lines;
  config.log.level = log_level::trace;
  config.log.sink = [&lines](log_level, std::string_view line) { lines.emplace_back(line); };
  s3_client client(io.get_executor(), config);

  EXPECT_FALSE(get(client, "some/key").first);
  EXPECT_EQ(put(client, "some/key", "{}", put_condition::absent()).first,
            errc::precondition_failed);

  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("method=GET"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("key=some/key"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("status=200"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("ms="), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("s3_code=PreconditionFailed"), std::string::npos) << lines[1];
  for (const auto& line : lines) {
    EXPECT_EQ(line.find(secret), std::string::npos) << line;
    EXPECT_EQ(line.find("token-never-logged"), std::string::npos) << line;
    EXPECT_EQ(line.find("Signature="), std::string::npos) << line;
    EXPECT_EQ(line.find("Authorization"), std::string::npos) << line;
  }
  EXPECT_EQ(client.stats().failures, 0u);  // a lost race is not a failure
}

// finish() cleared the caller's cancellation slot on the request's strand, racing an emission on
// the caller's (the bug ThreadSanitizer found in memory_storage). Under TSan this recreates the
// race (see fake/read_cancellation_race.hpp); everywhere, every read completes, and succeeds.
TEST_F(S3ClientTest, CancellationEmittedWhileTheRequestFinishesElsewhere) {
  scripted_http_server server(always(http_reply(200, "x", {"ETag: \"e\""})));
  s3_client client(io.get_executor(), config_for(server.endpoint()));
  constexpr int rounds = 1000;
  const auto result = test::run_read_race(io, client, "key", rounds, 400);
  EXPECT_EQ(result.finished, rounds);
  EXPECT_EQ(result.unexpected, 0);
}

}  // namespace
}  // namespace s3lect
