// The Beast + OpenSSL translation unit of the health server (~30 s to compile: keep it alone).
// The protocol lives in health_protocol.cpp and the watch logic in health_handler.cpp; this
// file only does TLS, HTTP framing, timeouts and connection limits.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>

#include "health_protocol.hpp"
#include "tcp_listen.hpp"
#include "tls_context.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace s3lect {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

/// Health requests carry no body; a small one is read and ignored (a POST still gets its 405).
constexpr std::uint64_t max_body_bytes = 8 * 1024;
/// Bytes asked for by the read that waits for a request's first byte.
constexpr std::size_t first_read_bytes = 4 * 1024;
/// Pause after a failed accept (e.g. out of file descriptors) so the loop does not spin.
constexpr std::chrono::milliseconds accept_backoff{100};

/// Named once: GCC 12 mishandles temporaries built inside a co_await expression (style.md).
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// A plain socket under TLS, without beast::tcp_stream: its timeouts arm and cancel a timer for
// every read and write, which cost more CPU than the TLS record itself for a health answer.
// One watchdog timer per connection enforces the deadlines instead (health_connection).
using tls_stream = ssl::stream<tcp::socket>;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "health_server_config." + message);
}

ssl::context make_server_tls_context(const health_server_config& config) {
  detail::tls_field_names names;
  names.prefix = "health_server_config.tls.";
  return detail::make_tls_context(config.tls, detail::tls_role::server, names);
}

tcp::endpoint parse_endpoint(const std::string& bind_address) {
  // validate() has checked the shape and the address.
  const auto parts = detail::split_bind_address(bind_address);
  return {asio::ip::make_address(std::string(parts->host)), parts->port};
}

bool is_http_error(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

std::string describe(const error_code& ec) {
  return ec.message() + " (" + ec.to_string() + ")";
}

/// True for a request of the metrics route, when there is one.
bool is_metrics_request(const health_server_config& config,
                        const http::request<http::string_body>& request) {
  if (!config.metrics) return false;
  const std::string_view target = request.target();
  return target.substr(0, target.find('?')) == health_server_config::metrics_path;
}

health_response plain_response(unsigned status, std::string body) {
  health_response response;
  response.status = status;
  response.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"Cache-Control", "no-store"}};
  response.body = std::move(body);
  return response;
}

}  // namespace

namespace detail {

/// One accepted connection, listed so that a stop can close it. Shared by its coroutine and its
/// watchdog's pending wait, so that neither outlives it.
struct health_connection : std::enable_shared_from_this<health_connection> {
  enum class phase { handshake, idle, reading, answering, writing };

  health_connection(tcp::socket socket, ssl::context& tls, std::chrono::milliseconds tick)
      : stream(std::move(socket), tls), watchdog(stream.get_executor()), longest_wait(tick) {}

  /// Makes every pending operation on the connection complete at once.
  void close() {
    error_code ignored;
    stream.next_layer().close(ignored);
  }

  /// Closes the connection unless it is done by `deadline` (time_point::max(): no deadline).
  /// Costs no timer operation while deadlines only move later, which they do on the request
  /// path: the watchdog never sleeps longer than `longest_wait` (the read timeout), and every
  /// deadline set is at least that far away.
  void set_deadline(clock_type::time_point when) {
    deadline = when;
    if (!watching) {
      watching = true;
      arm();
    } else if (when < armed_for) {
      watchdog.cancel();  // the wake-up re-arms for the new deadline
    }
  }

  /// Ends the watchdog: the connection's coroutine is done with it.
  void finish() {
    finished = true;
    watchdog.cancel();
  }

  tls_stream stream;
  phase state = phase::handshake;
  bool timed_out = false;  ///< The watchdog closed the connection.
  /// Reused for every answer, so that keep-alive requests do not allocate one each.
  std::string output;

 private:
  void arm() {
    armed_for = std::min(deadline, clock_type::now() + longest_wait);
    watchdog.expires_at(armed_for);
    watchdog.async_wait([self = shared_from_this()](error_code) { self->wake(); });
  }

  void wake() {
    if (finished) return;
    if (clock_type::now() >= deadline) {
      timed_out = true;
      watching = false;
      close();
      return;
    }
    arm();
  }

  asio::steady_timer watchdog;
  const clock_type::duration longest_wait;
  clock_type::time_point deadline = clock_type::time_point::max();
  clock_type::time_point armed_for = clock_type::time_point::max();
  bool watching = false;
  bool finished = false;
};

struct health_server_state : std::enable_shared_from_this<health_server_state> {
  using executor_type = asio::any_io_executor;
  using stop_handler = asio::any_completion_handler<void(error_code)>;

  health_server_state(executor_type ex, leadership_source& source, health_server_config cfg)
      : executor(std::move(ex)),
        strand(asio::make_strand(executor)),
        config(std::move(cfg)),
        tls(make_server_tls_context(config)),
        handler(executor, source, config.handler),
        acceptor(strand),
        endpoint(parse_endpoint(config.bind_address)) {}

  void log(log_level level, const std::string& line) const { config.log.log(level, line); }

  /// The answer to a request of the metrics route (GET or HEAD; a HEAD is written without the
  /// body).
  health_response metrics_response(const http::request<http::string_body>& request) {
    const bool head = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !head) {
      health_response response = plain_response(405, "method not allowed\n");
      response.headers.emplace_back("Allow", "GET, HEAD");
      return response;
    }
    std::string body;
    bool rendered = false;
    try {
      const std::lock_guard lock(metrics_mutex);
      if (!metrics_detached) {
        body = config.metrics();
        rendered = true;
      }
    } catch (const std::exception& e) {
      log(log_level::error, std::string("metrics rendering failed what=") + e.what());
    }
    if (!rendered) return plain_response(500, "metrics unavailable\n");
    health_response response = plain_response(200, std::move(body));
    response.headers.front().second = "text/plain; version=0.0.4; charset=utf-8";
    return response;
  }

  /// Strand only. Stops accepting, wakes pending watches and closes connections that are not
  /// answering; `abort` closes those too (destruction: nobody waits for the answers).
  void begin_stop(bool abort) {
    if (!stopping.exchange(true)) {
      error_code ignored;
      acceptor.close(ignored);
      handler.stop();
      log(log_level::info, "health server stopping");
    }
    for (health_connection* connection : connections) {
      const auto state = connection->state;
      if (abort || state == health_connection::phase::handshake ||
          state == health_connection::phase::idle || state == health_connection::phase::reading) {
        connection->close();
      }
    }
    finish_stop_if_done();
  }

  /// Strand only. Completes the stop waiters once nothing runs any more.
  void finish_stop_if_done() {
    if (!stopping || accepting || !connections.empty()) return;
    std::vector<stop_handler> waiters = std::move(stop_waiters);
    stop_waiters.clear();
    for (stop_handler& waiter : waiters) {
      // post() runs the handler on its own associated executor, never inline here.
      asio::post(strand, asio::append(std::move(waiter), error_code{}));
    }
  }

  executor_type executor;
  asio::strand<executor_type> strand;
  const health_server_config config;
  ssl::context tls;
  health_handler handler;
  tcp::acceptor acceptor;
  const tcp::endpoint endpoint;

  mutable std::mutex start_mutex;
  bool started = false;  // guarded by start_mutex
  tcp::endpoint bound;   // guarded by start_mutex

  /// Held while rendering the metrics, so that once destruction began they are not rendered.
  std::mutex metrics_mutex;
  bool metrics_detached = false;  // guarded by metrics_mutex

  std::atomic<bool> stopping{false};
  bool accepting = false;                     // strand only (set by start() before the loop)
  std::list<health_connection*> connections;  // strand only
  std::vector<stop_handler> stop_waiters;     // strand only

  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> rejected{0};
  std::atomic<std::uint64_t> failed_handshakes{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> active_connections{0};
};

}  // namespace detail

namespace {

using state_ptr = std::shared_ptr<detail::health_server_state>;

/// Keeps a connection in the server's list for as long as its coroutine runs.
class connection_registration {
 public:
  connection_registration(detail::health_server_state& server,
                          detail::health_connection& connection)
      : server_(server),
        connection_(connection),
        position_(server.connections.insert(server.connections.end(), &connection)) {
    ++server_.active_connections;
  }
  ~connection_registration() {
    connection_.finish();
    server_.connections.erase(position_);
    --server_.active_connections;
    server_.finish_stop_if_done();
  }
  connection_registration(const connection_registration&) = delete;
  connection_registration& operator=(const connection_registration&) = delete;

 private:
  detail::health_server_state& server_;
  detail::health_connection& connection_;
  std::list<detail::health_connection*>::iterator position_;
};

/// Reads one request into `parser`, from what `buffer` holds and then from the connection; the
/// bytes after it stay in `buffer` (pipelining). Parsed here rather than by http::async_read, so
/// that a request that arrives whole costs one read and no timer. An error of the HTTP category
/// is the client's fault and gets an answer; any other ends the connection.
asio::awaitable<error_code> read_request(const detail::health_server_state& server,
                                         detail::health_connection& connection,
                                         beast::flat_buffer& buffer,
                                         http::request_parser<http::string_body>& parser) {
  using phase = detail::health_connection::phase;
  bool read_deadline_set = false;
  for (;;) {
    if (buffer.size() != 0) {
      error_code parse_ec;
      const std::size_t used = parser.put(buffer.data(), parse_ec);
      buffer.consume(used);
      if (parser.is_done()) co_return error_code{};
      if (parse_ec && parse_ec != http::error::need_more) co_return parse_ec;
      if (!parse_ec && used != 0) continue;  // the header is done; the body comes next
      if (buffer.size() == buffer.max_size()) co_return http::error::buffer_overflow;
    }
    if (buffer.size() == 0 && !parser.got_some()) {
      // Between requests the idle timeout applies; from a request's first byte, read_timeout.
      connection.state = phase::idle;
      connection.set_deadline(clock_type::now() + server.config.idle_timeout);
    } else if (!read_deadline_set) {
      connection.state = phase::reading;
      connection.set_deadline(clock_type::now() + server.config.read_timeout);
      read_deadline_set = true;
    }
    const std::size_t room = std::min(first_read_bytes, buffer.max_size() - buffer.size());
    auto [read_ec, bytes] =
        co_await connection.stream.async_read_some(buffer.prepare(room), use_tuple);
    buffer.commit(bytes);
    if (read_ec == asio::error::eof && (parser.got_some() || buffer.size() != 0)) {
      co_return http::error::partial_message;
    }
    if (read_ec) co_return read_ec;
  }
}

/// Reads requests and writes answers until the client leaves, a timeout, an error, or a stop.
asio::awaitable<void> run_connection(detail::health_server_state& server,
                                     detail::health_connection& connection) {
  using phase = detail::health_connection::phase;
  const health_server_config& config = server.config;

  connection.set_deadline(clock_type::now() + config.read_timeout);
  auto [handshake_ec] =
      co_await connection.stream.async_handshake(ssl::stream_base::server, use_tuple);
  if (handshake_ec) {
    ++server.failed_handshakes;
    server.log(log_level::debug, "health handshake failed error=" + describe(handshake_ec));
    co_return;
  }

  // Bounded so that pipelined garbage cannot grow it without limit.
  beast::flat_buffer buffer(config.max_header_bytes + max_body_bytes + first_read_bytes);
  for (;;) {
    if (buffer.size() == 0 && server.stopping) break;
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(config.max_header_bytes));
    parser.body_limit(max_body_bytes);
    const error_code read_ec = co_await read_request(server, connection, buffer, parser);

    std::string& output = connection.output;
    output.clear();
    bool keep_alive = false;
    if (read_ec == http::error::header_limit) {
      detail::append_http_response(output, detail::header_too_large_response(), 11, false);
    } else if (read_ec && is_http_error(read_ec)) {
      detail::append_http_response(
          output, detail::bad_request_response("malformed HTTP request: " + read_ec.message()), 11,
          false);
    } else if (read_ec) {
      if (!connection.timed_out || buffer.size() != 0) {
        server.log(log_level::debug,
                   "health read ended error=" +
                       (connection.timed_out ? std::string("timeout") : describe(read_ec)));
      }
      break;  // a timeout, a reset, or a stop: nobody to answer
    } else {
      connection.state = phase::answering;
      connection.set_deadline(clock_type::time_point::max());  // a watch may be held
      const http::request<http::string_body>& request = parser.get();
      keep_alive = request.keep_alive() && !server.stopping;
      if (is_metrics_request(config, request)) {
        detail::append_http_response(output, server.metrics_response(request), request.version(),
                                     keep_alive, request.method() == http::verb::head);
      } else {
        const health_request question{std::string(request.method_string()),
                                      std::string(request.target())};
        const auto route =
            detail::route_request(question.method, question.target, server.handler.config().path);
        if (route.type == detail::routed_request::kind::watch) {
          auto [handle_ec, answer] = co_await server.handler.async_handle(question, use_tuple);
          if (handle_ec) break;  // the server is being destroyed
          // A watch may have been held across a stop.
          keep_alive = keep_alive && !server.stopping;
          detail::append_http_response(output, answer, request.version(), keep_alive);
        } else {
          // Answered at once: no coroutine, strand hop or type-erased handler per request.
          detail::append_http_response(output, server.handler.handle(question), request.version(),
                                       keep_alive);
        }
      }
    }

    connection.state = phase::writing;
    connection.set_deadline(clock_type::now() + config.read_timeout);
    // Counted before the write: a client that has read its answer finds it counted.
    ++server.requests;
    auto [write_ec, written] =
        co_await asio::async_write(connection.stream, asio::buffer(output), use_tuple);
    (void)written;
    if (write_ec) break;
    if (!keep_alive) {
      // After a protocol error the client may still be sending: close without waiting.
      if (read_ec) break;
      // close_notify tells the client the close is deliberate, not a truncation.
      auto [shutdown_ec] = co_await connection.stream.async_shutdown(use_tuple);
      (void)shutdown_ec;
      break;
    }
  }
}

asio::awaitable<void> serve_connection(state_ptr server, tcp::socket socket) {
  const auto connection = std::make_shared<detail::health_connection>(
      std::move(socket), server->tls, server->config.read_timeout);
  const connection_registration registration(*server, *connection);
  co_await run_connection(*server, *connection);
}

asio::awaitable<void> accept_connections(state_ptr server);

/// Completion of a detached coroutine: logs what escaped it (a health connection must not take
/// down the application's io_context), and ends the accept loop's share of a stop.
struct coroutine_done {
  state_ptr server;
  bool accept_loop;
  void operator()(std::exception_ptr failure) const {
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        server->log(log_level::error,
                    std::string("health server coroutine failed what=") + e.what());
      }
    }
    if (accept_loop) {
      server->accepting = false;
      server->finish_stop_if_done();
    }
  }
};

asio::awaitable<void> accept_connections(state_ptr server) {
  for (;;) {
    auto [ec, socket] = co_await server->acceptor.async_accept(use_tuple);
    if (server->stopping) co_return;
    if (ec) {
      if (ec == asio::error::operation_aborted) co_return;
      server->log(log_level::warning, "health accept failed error=" + describe(ec));
      asio::steady_timer backoff(server->strand, accept_backoff);
      auto [timer_ec] = co_await backoff.async_wait(use_tuple);
      (void)timer_ec;
      continue;
    }
    ++server->accepted;
    if (server->connections.size() >= server->config.max_connections) {
      ++server->rejected;
      server->log(log_level::debug, "health connection rejected reason=max_connections");
      error_code ignored;
      socket.close(ignored);
      continue;
    }
    // Answers are small and written at once: without TCP_NODELAY the first answer on a new TLS
    // connection waits ~40 ms for the client's delayed ACK of the session ticket (Nagle).
    error_code nodelay_ignored;
    socket.set_option(asio::ip::tcp::no_delay(true), nodelay_ignored);
    asio::co_spawn(server->strand, serve_connection(server, std::move(socket)),
                   coroutine_done{server, false});
  }
}

/// Runs begin_stop on the strand, then queues the stop's completion.
struct stop_on_strand {
  state_ptr server;
  detail::health_server_state::stop_handler handler;
  void operator()() {
    if (handler) server->stop_waiters.push_back(std::move(handler));
    server->begin_stop(false);
  }
};

struct abort_on_strand {
  state_ptr server;
  void operator()() const { server->begin_stop(true); }
};

}  // namespace

health_server::health_server(executor_type executor, leadership_source& source,
                             health_server_config config) {
  if (auto error = config.validate()) throw_config(*error);
  state_ =
      std::make_shared<detail::health_server_state>(std::move(executor), source, std::move(config));
}

health_server::~health_server() {
  // From here on no coroutine may touch the source, which may die right after us.
  state_->handler.detach();
  {
    const std::lock_guard lock(state_->metrics_mutex);
    state_->metrics_detached = true;
  }
  asio::post(state_->strand, abort_on_strand{state_});
}

health_server::executor_type health_server::get_executor() const {
  return state_->executor;
}

error_code health_server::start() {
  const std::lock_guard lock(state_->start_mutex);
  if (state_->started) return asio::error::already_started;
  if (state_->stopping) return errc::stopped;
  tcp::endpoint bound;
  const error_code ec = detail::listen_on(state_->acceptor, state_->endpoint, bound);
  if (ec) {
    // Returned to the caller, who reports it: only a debug line here.
    state_->log(log_level::debug, "health server cannot listen address=" +
                                      state_->config.bind_address + " error=" + describe(ec));
    return ec;
  }
  state_->started = true;
  state_->bound = bound;
  state_->accepting = true;
  state_->log(log_level::info, "health server listening address=" + bound.address().to_string() +
                                   " port=" + std::to_string(bound.port()));
  asio::co_spawn(state_->strand, accept_connections(state_), coroutine_done{state_, true});
  return {};
}

tcp::endpoint health_server::local_endpoint() const {
  const std::lock_guard lock(state_->start_mutex);
  return state_->bound;
}

void health_server::stop_impl(stop_handler handler) {
  asio::dispatch(state_->strand, stop_on_strand{state_, std::move(handler)});
}

health_server_stats health_server::stats() const {
  health_server_stats stats;
  stats.accepted_connections = state_->accepted;
  stats.rejected_connections = state_->rejected;
  stats.failed_handshakes = state_->failed_handshakes;
  stats.requests = state_->requests;
  stats.active_connections = state_->active_connections;
  stats.active_watches = state_->handler.active_watches();
  return stats;
}

}  // namespace s3lect
