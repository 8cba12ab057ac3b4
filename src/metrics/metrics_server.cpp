// The Beast translation unit of the metrics server: plain HTTP, one route, bounded input.
// No TLS here (that costs the health server most of its compile time); a scraper that needs
// TLS scrapes the health server's /metrics instead.
#include <s3lect/error.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>

#include "health_protocol.hpp"
#include "tcp_listen.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <exception>
#include <list>
#include <mutex>
#include <vector>

namespace s3lect {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

/// Scrapes carry no body; a small one is read and ignored.
constexpr std::uint64_t max_body_bytes = 8 * 1024;
/// Bytes asked for by the read that waits for a request's first byte.
constexpr std::size_t first_read_bytes = 4 * 1024;
/// Pause after a failed accept (e.g. out of file descriptors) so the loop does not spin.
constexpr std::chrono::milliseconds accept_backoff{100};

/// Named once: GCC 12 mishandles temporaries built inside a co_await expression (style.md).
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "metrics_server_config." + message);
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

http::response<http::string_body> text_response(http::status status, std::string body) {
  http::response<http::string_body> response{status, 11};
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.set(http::field::cache_control, "no-store");
  response.body() = std::move(body);
  return response;
}

}  // namespace

std::optional<std::string> metrics_server_config::validate() const {
  const auto parts = detail::split_bind_address(bind_address);
  if (!parts) {
    return "bind_address: must be 'IP:port' or '[IPv6]:port', is '" + bind_address + "'";
  }
  error_code ec;
  asio::ip::make_address(std::string(parts->host), ec);
  if (ec) return "bind_address: '" + std::string(parts->host) + "' is not an IP address";
  if (path.empty() || path.front() != '/' || path.find_first_of("?# \t\r\n") != std::string::npos) {
    return "path: must start with '/' and hold no '?', '#' or whitespace, is '" + path + "'";
  }
  if (!render) return "render: must be set";
  if (max_header_bytes < 1024 || max_header_bytes > 1024 * 1024) {
    return "max_header_bytes: must be between 1024 and 1048576, is " +
           std::to_string(max_header_bytes);
  }
  if (read_timeout <= std::chrono::milliseconds::zero()) {
    return "read_timeout: must be positive, is " + std::to_string(read_timeout.count()) + " ms";
  }
  if (idle_timeout <= std::chrono::milliseconds::zero()) {
    return "idle_timeout: must be positive, is " + std::to_string(idle_timeout.count()) + " ms";
  }
  if (max_connections == 0) return "max_connections: must be at least 1";
  return std::nullopt;
}

namespace detail {

/// One accepted connection, listed so that a stop can close it.
struct metrics_connection {
  enum class phase { idle, reading, writing };

  explicit metrics_connection(tcp::socket socket) : stream(std::move(socket)) {}

  beast::tcp_stream stream;
  phase state = phase::idle;
};

struct metrics_server_state : std::enable_shared_from_this<metrics_server_state> {
  using executor_type = asio::any_io_executor;
  using stop_handler = asio::any_completion_handler<void(error_code)>;

  metrics_server_state(executor_type ex, metrics_server_config cfg)
      : executor(std::move(ex)),
        strand(asio::make_strand(executor)),
        config(std::move(cfg)),
        acceptor(strand),
        endpoint(parse_endpoint(config.bind_address)) {}

  void log(log_level level, const std::string& line) const { config.log.log(level, line); }

  /// Strand only. Stops accepting and closes connections not writing an answer; `abort`
  /// closes those too.
  void begin_stop(bool abort) {
    if (!stopping.exchange(true)) {
      error_code ignored;
      acceptor.close(ignored);
      log(log_level::info, "metrics server stopping");
    }
    for (metrics_connection* connection : connections) {
      if (abort || connection->state != metrics_connection::phase::writing) {
        connection->stream.close();
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
      asio::post(strand, asio::append(std::move(waiter), error_code{}));
    }
  }

  /// The answer to a request that was read completely.
  http::response<http::string_body> answer(const http::request<http::string_body>& request) {
    const bool head = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !head) {
      auto response = text_response(http::status::method_not_allowed, "method not allowed\n");
      response.set(http::field::allow, "GET, HEAD");
      return response;
    }
    const std::string_view target = request.target();
    if (target.substr(0, target.find('?')) != config.path) {
      return text_response(http::status::not_found, "not found\n");
    }
    std::string body;
    try {
      const std::lock_guard lock(render_mutex);
      if (detached) return text_response(http::status::service_unavailable, "stopped\n");
      body = config.render();
    } catch (const std::exception& e) {
      log(log_level::error, std::string("metrics rendering failed what=") + e.what());
      return text_response(http::status::internal_server_error, "metrics unavailable\n");
    }
    http::response<http::string_body> response{http::status::ok, 11};
    response.set(http::field::content_type, prometheus_content_type);
    response.set(http::field::cache_control, "no-store");
    if (head) {
      response.content_length(body.size());
    } else {
      response.body() = std::move(body);
    }
    return response;
  }

  executor_type executor;
  asio::strand<executor_type> strand;
  const metrics_server_config config;
  tcp::acceptor acceptor;
  const tcp::endpoint endpoint;

  mutable std::mutex start_mutex;
  bool started = false;  // guarded by start_mutex
  tcp::endpoint bound;   // guarded by start_mutex

  /// Held while rendering, so that once the server is destroyed render is no longer called.
  std::mutex render_mutex;
  bool detached = false;  // guarded by render_mutex

  std::atomic<bool> stopping{false};
  bool accepting = false;                      // strand only
  std::list<metrics_connection*> connections;  // strand only
  std::vector<stop_handler> stop_waiters;      // strand only
};

}  // namespace detail

namespace {

using state_ptr = std::shared_ptr<detail::metrics_server_state>;
using phase = detail::metrics_connection::phase;

/// Keeps a connection in the server's list for as long as its coroutine runs.
class connection_registration {
 public:
  connection_registration(detail::metrics_server_state& server,
                          detail::metrics_connection& connection)
      : server_(server),
        position_(server.connections.insert(server.connections.end(), &connection)) {}
  ~connection_registration() {
    server_.connections.erase(position_);
    server_.finish_stop_if_done();
  }
  connection_registration(const connection_registration&) = delete;
  connection_registration& operator=(const connection_registration&) = delete;

 private:
  detail::metrics_server_state& server_;
  std::list<detail::metrics_connection*>::iterator position_;
};

/// Reads requests and writes answers until the client leaves, a timeout, an error, or a stop.
asio::awaitable<void> run_connection(detail::metrics_server_state& server,
                                     detail::metrics_connection& connection) {
  const metrics_server_config& config = server.config;
  beast::tcp_stream& stream = connection.stream;
  // Bounded so that pipelined garbage cannot grow it without limit.
  beast::flat_buffer buffer(config.max_header_bytes + max_body_bytes + first_read_bytes);
  for (;;) {
    if (buffer.size() == 0) {
      // Between requests the idle timeout applies; from a request's first byte, read_timeout.
      connection.state = phase::idle;
      if (server.stopping) break;
      stream.expires_after(config.idle_timeout);
      auto [ec, bytes] =
          co_await stream.async_read_some(buffer.prepare(first_read_bytes), use_tuple);
      if (ec) break;
      buffer.commit(bytes);
    }

    connection.state = phase::reading;
    stream.expires_after(config.read_timeout);
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(config.max_header_bytes));
    parser.body_limit(max_body_bytes);
    auto [read_ec, read_bytes] = co_await http::async_read(stream, buffer, parser, use_tuple);
    (void)read_bytes;

    http::response<http::string_body> response;
    bool keep_alive = false;
    if (read_ec == http::error::header_limit) {
      response = text_response(http::status::request_header_fields_too_large,
                               "request header fields too large\n");
    } else if (read_ec && is_http_error(read_ec)) {
      response = text_response(http::status::bad_request,
                               "malformed HTTP request: " + read_ec.message() + "\n");
    } else if (read_ec) {
      if (read_ec != beast::error::timeout || buffer.size() != 0) {
        server.log(log_level::debug, "metrics read ended error=" + describe(read_ec));
      }
      break;  // a timeout, a reset, or a stop: nobody to answer
    } else {
      response = server.answer(parser.get());
      response.version(parser.get().version());
      keep_alive = parser.get().keep_alive() && !server.stopping;
    }
    response.keep_alive(keep_alive);
    if (response.body().size() != 0 || !response.has_content_length()) response.prepare_payload();

    connection.state = phase::writing;
    stream.expires_after(config.read_timeout);
    auto [write_ec, written] = co_await http::async_write(stream, response, use_tuple);
    (void)written;
    if (write_ec || !keep_alive) break;
  }
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> serve_connection(state_ptr server, tcp::socket socket) {
  detail::metrics_connection connection(std::move(socket));
  const connection_registration registration(*server, connection);
  co_await run_connection(*server, connection);
}

/// Completion of a detached coroutine: logs what escaped it (a scrape must not take down the
/// application's io_context), and ends the accept loop's share of a stop.
struct coroutine_done {
  state_ptr server;
  bool accept_loop;
  void operator()(std::exception_ptr failure) const {
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        server->log(log_level::error,
                    std::string("metrics server coroutine failed what=") + e.what());
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
      server->log(log_level::warning, "metrics accept failed error=" + describe(ec));
      asio::steady_timer backoff(server->strand, accept_backoff);
      auto [timer_ec] = co_await backoff.async_wait(use_tuple);
      (void)timer_ec;
      continue;
    }
    if (server->connections.size() >= server->config.max_connections) {
      server->log(log_level::debug, "metrics connection rejected reason=max_connections");
      error_code ignored;
      socket.close(ignored);
      continue;
    }
    asio::co_spawn(server->strand, serve_connection(server, std::move(socket)),
                   coroutine_done{server, false});
  }
}

struct stop_on_strand {
  state_ptr server;
  detail::metrics_server_state::stop_handler handler;
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

metrics_server::metrics_server(executor_type executor, metrics_server_config config) {
  if (auto error = config.validate()) throw_config(*error);
  state_ = std::make_shared<detail::metrics_server_state>(std::move(executor), std::move(config));
}

metrics_server::~metrics_server() {
  {
    // From here on `render`, which may refer to objects dying after us, is not called.
    const std::lock_guard lock(state_->render_mutex);
    state_->detached = true;
  }
  asio::post(state_->strand, abort_on_strand{state_});
}

metrics_server::executor_type metrics_server::get_executor() const {
  return state_->executor;
}

error_code metrics_server::start() {
  const std::lock_guard lock(state_->start_mutex);
  if (state_->started) return asio::error::already_started;
  if (state_->stopping) return errc::stopped;
  tcp::endpoint bound;
  const error_code ec = detail::listen_on(state_->acceptor, state_->endpoint, bound);
  if (ec) {
    // Returned to the caller, who reports it: only a debug line here.
    state_->log(log_level::debug, "metrics server cannot listen address=" +
                                      state_->config.bind_address + " error=" + describe(ec));
    return ec;
  }
  state_->started = true;
  state_->bound = bound;
  state_->accepting = true;
  state_->log(log_level::info, "metrics server listening address=" + bound.address().to_string() +
                                   " port=" + std::to_string(bound.port()));
  asio::co_spawn(state_->strand, accept_connections(state_), coroutine_done{state_, true});
  return {};
}

tcp::endpoint metrics_server::local_endpoint() const {
  const std::lock_guard lock(state_->start_mutex);
  return state_->bound;
}

void metrics_server::stop_impl(stop_handler handler) {
  asio::dispatch(state_->strand, stop_on_strand{state_, std::move(handler)});
}

}  // namespace s3lect
