// An application that already runs its own Beast HTTP server serves s3lect's leadership
// endpoint next to its own routes, on the same port: `/` and `/orders` are the application's,
// `/health/leadership` is answered by an s3lect::health_handler reading the elector (followers
// in peer mode ask it whether this node still leads; see docs/peer-mode.md).
//
// Plain HTTP keeps the example short, but followers in peer mode speak HTTPS only. In
// production, wrap each accepted socket in an asio::ssl::stream<beast::tcp_stream> and
// handshake before the request loop (the session code stays the same; see Beast's
// example/advanced/server-flex-awaitable), with a certificate whose SANs name the address
// this node publishes as leaderAddr (elector_config::server_address). Terminating TLS in a
// proxy on the same host works too, if server_address is the proxy's address.
//
// The store is s3lect::memory_store (an in-process bucket) because the point is the server
// side; with a real bucket, construct an s3lect::s3_client instead.
//
// usage: embedded_health              serve on 127.0.0.1:8080 until SIGINT or SIGTERM
//        embedded_health --self-test  serve on a free port, fetch its own routes, check the
//                                     answers, stop, and exit 0 only if all were right (CTest)
#include <s3lect/beast_handler.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

using request_type = http::request<http::string_body>;
using response_type = http::response<http::string_body>;

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// ---- The application's server ------------------------------------------------------------

response_type make_response(const request_type& request, http::status status,
                            std::string content_type, std::string body) {
  response_type response{status, request.version()};
  response.set(http::field::content_type, content_type);
  response.body() = std::move(body);
  response.keep_alive(request.keep_alive());
  response.prepare_payload();
  return response;
}

/// The application's own routes.
response_type handle_app_request(const request_type& request) {
  if (request.method() != http::verb::get) {
    return make_response(request, http::status::method_not_allowed, "text/plain", "GET only\n");
  }
  if (request.target() == "/") {
    return make_response(request, http::status::ok, "text/plain", "the shop\n");
  }
  if (request.target() == "/orders") {
    return make_response(request, http::status::ok, "application/json", R"([{"id":1}])");
  }
  return make_response(request, http::status::not_found, "text/plain", "no such page\n");
}

/// True for requests to the leadership endpoint, whatever their query (`?watch=...`).
bool is_health_request(const request_type& request, const s3lect::health_handler& health) {
  const auto target = request.target();
  return target.substr(0, target.find('?')) == health.config().path;
}

/// One connection: read a request, route it, answer, until the client closes.
asio::awaitable<void> serve_session(tcp::socket socket, s3lect::health_handler& health) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    request_type request;
    stream.expires_after(30s);  // idle or slow clients are cut off
    auto [read_error, read_bytes] =
        co_await http::async_read(stream, buffer, request, as_tuple_awaitable);
    if (read_error) break;  // closed by the client, timed out, or not HTTP
    response_type response;
    if (is_health_request(request, health)) {
      // A plain GET is answered at once; a watch (?watch=&term=&serial=) is held until this
      // node's leadership changes. Only this session waits; the others go on.
      auto [health_error, health_response] =
          co_await s3lect::async_handle_health_request(health, request, as_tuple_awaitable);
      if (health_error) break;  // the handler is gone: shutting down
      response = std::move(health_response);
    } else {
      response = handle_app_request(request);
    }
    stream.expires_after(30s);
    auto [write_error, written_bytes] =
        co_await http::async_write(stream, response, as_tuple_awaitable);
    if (write_error || !response.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, s3lect::health_handler& health) {
  for (;;) {
    auto [error, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
    if (error == asio::error::operation_aborted) co_return;  // acceptor closed: shutting down
    if (error) continue;
    asio::co_spawn(acceptor.get_executor(), serve_session(std::move(socket), health),
                   asio::detached);
  }
}

/// Stops in the order that hands over best: the elector releases the lock (and only then do
/// held watches learn that this node no longer leads, so a follower finds the lock free), then
/// the server stops accepting and answers any watch still held. Keep-alive connections end
/// when their clients close them, or after the sessions' 30 s timeout.
asio::awaitable<void> shut_down(s3lect::elector& elector, tcp::acceptor& acceptor,
                                s3lect::health_handler& health) {
  co_await elector.async_stop();
  acceptor.close();
  health.stop();
}

asio::awaitable<void> stop_on_signal(s3lect::elector& elector, tcp::acceptor& acceptor,
                                     s3lect::health_handler& health) {
  asio::signal_set signals(co_await asio::this_coro::executor, SIGINT, SIGTERM);
  co_await signals.async_wait(asio::use_awaitable);
  co_await shut_down(elector, acceptor, health);
}

// ---- The self-test: a tiny client fetching the server's own routes -----------------------

/// One request on a fresh connection.
asio::awaitable<response_type> fetch(tcp::endpoint server, http::verb method, std::string target) {
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  stream.expires_after(10s);
  co_await stream.async_connect(server, asio::use_awaitable);
  request_type request{method, target, 11};
  request.set(http::field::host, "127.0.0.1");
  request.keep_alive(false);
  co_await http::async_write(stream, request, asio::use_awaitable);
  beast::flat_buffer buffer;
  response_type response;
  co_await http::async_read(stream, buffer, response, asio::use_awaitable);
  co_return response;
}

/// Counts and prints the checks.
struct checker {
  int failures = 0;
  void operator()(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
    if (!ok) ++failures;
  }
};

/// The leader id in a /health/leadership answer, which is the leader's lock record (plus
/// "leaseRemainingMs" and "serial"); empty if it does not parse as one.
std::string leader_id_of(const std::string& body) {
  const auto decoded = s3lect::decode_record(body);
  return decoded.record ? decoded.record->leader_id : std::string();
}

/// Waits until the watch is being held, then stops the elector (not the server).
asio::awaitable<void> stop_elector_during_watch(s3lect::elector& elector,
                                                s3lect::health_handler& health) {
  asio::steady_timer poll(co_await asio::this_coro::executor);
  while (health.active_watches() == 0) {
    poll.expires_after(10ms);
    co_await poll.async_wait(asio::use_awaitable);
  }
  co_await elector.async_stop();
}

/// Returns the number of failed checks.
asio::awaitable<int> self_test(s3lect::elector& elector, tcp::acceptor& acceptor,
                               s3lect::health_handler& health, std::string server_id) {
  const tcp::endpoint server = acceptor.local_endpoint();
  checker check;
  const auto lease = co_await elector.async_wait_for_leadership();

  const auto home = co_await fetch(server, http::verb::get, "/");
  check(home.result() == http::status::ok, "GET / answers 200");
  const auto orders = co_await fetch(server, http::verb::get, "/orders");
  check(orders.result() == http::status::ok && orders.body() == R"([{"id":1}])",
        "GET /orders answers 200 with the orders");

  const auto leading = co_await fetch(server, http::verb::get, "/health/leadership");
  check(leading.result() == http::status::ok, "GET /health/leadership answers 200 while leader");
  check(leader_id_of(leading.body()) == server_id,
        "its JSON names this node as leaderID: " + leading.body());
  const auto post = co_await fetch(server, http::verb::post, "/health/leadership");
  check(post.result() == http::status::method_not_allowed, "POST /health/leadership: 405");

  // A follower's watch: held while this node leads with the term, answered once it stops.
  const std::string watch_target =
      "/health/leadership?watch=8000&term=" + std::to_string(lease.term);
  const auto watch_started = std::chrono::steady_clock::now();
  const auto watched = co_await (fetch(server, http::verb::get, watch_target) &&
                                 stop_elector_during_watch(elector, health));
  const auto watch_held = std::chrono::steady_clock::now() - watch_started;
  check(watched.result() == http::status::not_found && watched["X-S3lect-Watch"] == "changed" &&
            watch_held < 5s,
        "a held watch is answered 404 'changed' as soon as the elector stops");

  const auto stopped = co_await fetch(server, http::verb::get, "/health/leadership");
  check(stopped.result() == http::status::not_found,
        "GET /health/leadership answers 404 after stopping: " + stopped.body());
  const auto still_serving = co_await fetch(server, http::verb::get, "/orders");
  check(still_serving.result() == http::status::ok, "the application's routes still work");

  co_await shut_down(elector, acceptor, health);
  co_return check.failures;
}

}  // namespace

int main(int argc, char** argv) {
  const bool self_testing = argc > 1 && std::strcmp(argv[1], "--self-test") == 0;

  asio::io_context io;
  const tcp::endpoint listen_on(asio::ip::make_address("127.0.0.1"), self_testing ? 0 : 8080);
  tcp::acceptor acceptor(io, listen_on);
  const tcp::endpoint bound = acceptor.local_endpoint();

  auto bucket = std::make_shared<s3lect::memory_store>();
  s3lect::memory_storage store(io.get_executor(), bucket, 1s);
  s3lect::elector_config config;
  config.lock_key = "examples/embedded-health";
  config.server_id = "shop-1";
  // Published in the lock record as leaderAddr: where followers find this endpoint.
  config.server_address = bound.address().to_string() + ":" + std::to_string(bound.port());
  s3lect::elector elector(io.get_executor(), store, config);
  // Declared after the elector, so destroyed before it: the source must outlive the handler.
  s3lect::health_handler health(io.get_executor(), elector.health_source());

  elector.start();
  asio::co_spawn(io, accept_loop(acceptor, health), asio::detached);
  std::printf("serving http://%s/ as %s\n", config.server_address.c_str(),
              config.server_id.c_str());
  std::fflush(stdout);

  int exit_status = 0;
  if (self_testing) {
    asio::co_spawn(io, self_test(elector, acceptor, health, config.server_id),
                   [&exit_status](std::exception_ptr error, int failures) {
                     if (error) {
                       try {
                         std::rethrow_exception(error);
                       } catch (const std::exception& e) {
                         std::printf("FAILED: %s\n", e.what());
                       }
                     }
                     exit_status = error || failures != 0 ? 1 : 0;
                   });
  } else {
    asio::co_spawn(io, stop_on_signal(elector, acceptor, health), asio::detached);
  }
  io.run();
  return exit_status;
}
