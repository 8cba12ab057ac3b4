// The Beast + OpenSSL translation unit of the HTTP server skeleton (~30 s to compile: keep it
// alone). The health and metrics servers only route and answer (http_responder).
#include "http_server.hpp"

#include <s3lect/error.hpp>

#include <s3lect/file_descriptors.hpp>

#include "beast_names.hpp"
#include "dropped_connection_report.hpp"
#include "log_text.hpp"
#include "server_connection.hpp"
#include "tcp_listen.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
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

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <limits>
#include <list>
#include <mutex>
#include <variant>
#include <vector>

namespace s3lect::inline v1::detail {

namespace {

/// Bytes asked for by the read that waits for a request's first byte.
constexpr std::size_t first_read_bytes = 4 * 1024;
/// Pause after a failed accept (e.g. out of file descriptors) so the loop does not spin.
constexpr std::chrono::milliseconds accept_backoff{100};

/// Named once: GCC 12 mishandles temporaries built inside a co_await expression
/// (docs/architecture.md#gcc-12-coroutine-rules).
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// A plain socket, under TLS or not, without beast::tcp_stream: its timeouts arm and cancel a
// timer for every read and write, which cost more CPU than the TLS record itself for a health
// answer. One watchdog timer per connection enforces the deadlines instead (server_connection).
using request_parser = http::request_parser<http::string_body>;

bool is_http_error(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

std::string describe(const error_code& ec) {
  return ec.message() + " (" + ec.to_string() + ")";
}

}  // namespace

struct http_server_state : std::enable_shared_from_this<http_server_state> {
  http_server_state(asio::any_io_executor ex, http_server_settings config,
                    std::shared_ptr<http_responder> answering)
      : strand(asio::make_strand(ex)),
        settings(std::move(config)),
        responder(std::move(answering)),
        acceptor(strand),
        admission(settings.max_connections, settings.max_connections_per_source),
        dropped_report(settings.dropped_log_interval),
        dropped_timer(strand) {}

  void log(log_level level, const std::string& line) const {
    settings.log.log(level, settings.name + " " + line);
  }

  /// Raises RLIMIT_NOFILE to what this server may hold plus the reserve when it can, and
  /// refuses connections that would eat into the reserve when it cannot.
  void check_descriptors() {
    const std::uint64_t needed = reserved_file_descriptors + settings.max_connections +
                                 settings.max_watches + 1;  // + the listener
    const file_descriptor_limit limit = ensure_file_descriptors(needed);
    if (!limit.known) return;
    if (limit.soft != std::numeric_limits<std::uint64_t>::max()) {
      descriptor_ceiling =
          limit.soft > reserved_file_descriptors ? limit.soft - reserved_file_descriptors : 0;
    }
    if (!limit.enough()) {
      log(log_level::warning,
          "file descriptor limit below what the server may hold: connections are refused while "
          "fewer than " +
              std::to_string(reserved_file_descriptors) +
              " descriptors are free; raise ulimit -n or lower max_connections soft=" +
              std::to_string(limit.soft) + " hard=" + std::to_string(limit.hard) +
              " needed=" + std::to_string(needed));
    }
  }

  /// Strand only. Counts a dropped connection and logs it, at most one line per interval.
  void note_dropped(dropped_kind kind, const asio::ip::address& source) {
    ++dropped[static_cast<std::size_t>(kind)];
    if (auto line = dropped_report.count(kind, source.to_string(), clock_type::now())) {
      log_dropped(*line);
    } else {
      arm_dropped_flush();
    }
  }

  /// Strand only. Logs the counts held back once their interval is over (or the stop came).
  void arm_dropped_flush() {
    const auto due = dropped_report.flush_at();
    if (dropped_timer_armed || !due || stopping) return;
    dropped_timer_armed = true;
    dropped_timer.expires_at(*due);
    dropped_timer.async_wait([self = shared_from_this()](error_code ec) {
      self->dropped_timer_armed = false;
      if (ec) return;  // the stop logged what was held
      if (auto line = self->dropped_report.flush(clock_type::now())) self->log_dropped(*line);
      self->arm_dropped_flush();
    });
  }

  void log_dropped(const dropped_counts& line) const {
    // A refusal means the limits bit; timeouts and failed handshakes alone are also what port
    // scanners and TCP health checks cause, and are logged at info.
    log(line.refusals() ? log_level::warning : log_level::info,
        "dropped connections " + line.describe());
  }

  /// Strand only. Stops accepting and closes connections that are not answering; `abort`
  /// closes those too (destruction: nobody waits for the answers).
  void begin_stop(bool abort) {
    if (!stopping.exchange(true)) {
      error_code ignored;
      acceptor.close(ignored);
      dropped_timer.cancel();  // finish_stop_if_done() logs what is held
      responder->stopping();
      log(log_level::info, "server stopping");
    }
    for (server_connection* connection : connections) {
      const auto state = connection->state;
      if (abort || state == server_connection::phase::handshake ||
          state == server_connection::phase::idle || state == server_connection::phase::reading) {
        connection->close();
      }
    }
    finish_stop_if_done();
  }

  /// Strand only. Completes the stop waiters once nothing runs any more.
  void finish_stop_if_done() {
    if (!stopping || accepting || !connections.empty()) return;
    if (auto line = dropped_report.flush(clock_type::now(), true)) log_dropped(*line);
    std::vector<http_server::stop_handler> waiters = std::move(stop_waiters);
    stop_waiters.clear();
    for (http_server::stop_handler& waiter : waiters) {
      // post() runs the handler on its own associated executor, never inline here.
      asio::post(strand, asio::append(std::move(waiter), error_code{}));
    }
  }

  asio::strand<asio::any_io_executor> strand;
  const http_server_settings settings;
  const std::shared_ptr<http_responder> responder;
  tcp::acceptor acceptor;

  mutable std::mutex start_mutex;
  bool started = false;  // guarded by start_mutex
  tcp::endpoint bound;   // guarded by start_mutex

  std::atomic<bool> stopping{false};
  bool accepting = false;                     // strand only (set by start() before the loop)
  std::list<server_connection*> connections;  // strand only
  std::vector<http_server::stop_handler> stop_waiters;  // strand only
  connection_admission admission;                       // strand only
  dropped_connection_report dropped_report;             // strand only
  asio::steady_timer dropped_timer;                     // strand only
  bool dropped_timer_armed = false;                     // strand only
  /// Accepted descriptors from this number on are refused (RLIMIT_NOFILE minus the reserve).
  std::atomic<std::uint64_t> descriptor_ceiling{std::numeric_limits<std::uint64_t>::max()};

  std::atomic<std::uint64_t> accepted{0};
  /// Indexed by dropped_kind.
  std::array<std::atomic<std::uint64_t>, 5> dropped{};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> active_connections{0};
  std::atomic<std::uint64_t> active_watches{0};
};

namespace {

using state_ptr = std::shared_ptr<http_server_state>;
using phase = server_connection::phase;

/// Keeps a connection in the server's list for as long as its coroutine runs.
class connection_registration {
 public:
  connection_registration(http_server_state& server, server_connection& connection)
      : server_(server),
        connection_(connection),
        position_(server.connections.insert(server.connections.end(), &connection)) {
    ++server_.active_connections;
  }
  ~connection_registration() {
    connection_.finish();
    server_.connections.erase(position_);
    server_.admission.release(connection_.source, connection_.holds_watch);
    if (connection_.holds_watch) --server_.active_watches;
    --server_.active_connections;
    server_.finish_stop_if_done();
  }
  connection_registration(const connection_registration&) = delete;
  connection_registration& operator=(const connection_registration&) = delete;

 private:
  http_server_state& server_;
  server_connection& connection_;
  std::list<server_connection*>::iterator position_;
};

/// Before the first request, its deadline from the accept applies, shortened to read_timeout
/// from its first byte. Between later requests the idle timeout applies; from a request's first
/// byte, read_timeout.
void set_read_deadline(const http_server_state& server, server_connection& connection,
                       bool request_started, bool& read_deadline_set) {
  if (connection.first_request) {
    connection.state = request_started ? phase::reading : phase::idle;
    if (request_started && !read_deadline_set) {
      connection.set_deadline(std::min(connection.first_request_deadline,
                                       clock_type::now() + server.settings.read_timeout));
      read_deadline_set = true;
    }
  } else if (!request_started) {
    connection.state = phase::idle;
    connection.set_deadline(clock_type::now() + server.settings.idle_timeout);
  } else if (!read_deadline_set) {
    connection.state = phase::reading;
    connection.set_deadline(clock_type::now() + server.settings.read_timeout);
    read_deadline_set = true;
  }
}

/// Reads one request into `parser`, from what `buffer` holds and then from the connection; the
/// bytes after it stay in `buffer` (pipelining). Parsed here rather than by http::async_read, so
/// that a request that arrives whole costs one read and no timer. An error of the HTTP category
/// is the client's fault and gets an answer; any other ends the connection.
template <class Stream>
asio::awaitable<error_code> read_request(const http_server_state& server,
                                         server_connection& connection, Stream& stream,
                                         beast::flat_buffer& buffer, request_parser& parser) {
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
    const bool request_started = buffer.size() != 0 || parser.got_some();
    set_read_deadline(server, connection, request_started, read_deadline_set);
    const std::size_t room = std::min(first_read_bytes, buffer.max_size() - buffer.size());
    auto [read_ec, bytes] = co_await stream.async_read_some(buffer.prepare(room), use_tuple);
    buffer.commit(bytes);
    if (read_ec == asio::error::eof && (parser.got_some() || buffer.size() != 0)) {
      co_return http::error::partial_message;
    }
    if (read_ec) co_return read_ec;
  }
}

server_request to_server_request(const http::request<http::string_body>& request) {
  server_request out;
  out.method = std::string(request.method_string());
  out.target = std::string(request.target());
  out.version = request.version();
  out.keep_alive = request.keep_alive();
  return out;
}

/// A connection holding a watch leaves the general pool (connection_admission.hpp says why).
void begin_watch(http_server_state& server, server_connection& connection) {
  server.admission.begin_watch();
  connection.holds_watch = true;
  ++server.active_watches;
}

/// False when the general pool filled up during the watch: the connection then closes.
bool end_watch(http_server_state& server, server_connection& connection) {
  connection.holds_watch = false;
  --server.active_watches;
  return server.admission.end_watch();
}

/// Fills connection.output with the answer to what read_request() produced; false when the
/// connection is to end without an answer (a timeout, a reset, a stop, a departing responder).
asio::awaitable<bool> prepare_answer(http_server_state& server, server_connection& connection,
                                     const error_code& read_ec, const request_parser& parser,
                                     bool& keep_alive) {
  std::string& output = connection.output;
  output.clear();
  keep_alive = false;
  if (read_ec == http::error::header_limit || (read_ec && is_http_error(read_ec))) {
    const server_answer answer =
        read_ec == http::error::header_limit
            ? server.responder->reject(431, "request header fields too large")
            : server.responder->reject(400, "malformed HTTP request: " + read_ec.message());
    append_http_response(output, answer.status, answer.headers, answer.body, 11, false);
    co_return true;
  }
  if (read_ec) co_return false;
  connection.first_request = false;
  connection.state = phase::answering;
  connection.set_deadline(clock_type::time_point::max());  // a watch may be held
  server_request request = to_server_request(parser.get());
  request.source = source_name(connection.peer_address);
  request.verified_client = connection.verified_client;
  request.client_names = connection.client_names;
  const unsigned version = request.version;
  const bool wants_keep_alive = request.keep_alive;
  std::optional<server_answer> answer = server.responder->answer_at_once(request);
  bool room_to_stay = true;
  if (!answer) {
    begin_watch(server, connection);
    server_answer later = co_await server.responder->answer_later(std::move(request));
    room_to_stay = end_watch(server, connection);
    answer.emplace(std::move(later));
  }
  if (!answer->send) co_return false;
  // Read after the answer: a watch may have been held across a stop.
  keep_alive = wants_keep_alive && !server.stopping && room_to_stay;
  append_http_response(output, answer->status, answer->headers, answer->body, version, keep_alive,
                       answer->head);
  co_return true;
}

/// Ends a connection the server chose to close: close_notify under TLS tells the client the
/// close is deliberate, not a truncation; a plain socket sends FIN.
asio::awaitable<void> close_gracefully(tls_stream& stream) {
  auto [shutdown_ec] = co_await stream.async_shutdown(use_tuple);
  (void)shutdown_ec;
}

asio::awaitable<void> close_gracefully(tcp::socket& socket) {
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  co_return;
}

/// Reads requests and writes answers until the client leaves, a timeout, an error, or a stop.
template <class Stream>
asio::awaitable<void> serve_requests(http_server_state& server, server_connection& connection,
                                     Stream& stream) {
  const http_server_settings& settings = server.settings;
  // Bounded so that pipelined garbage cannot grow it without limit.
  beast::flat_buffer buffer(settings.max_header_bytes + settings.max_body_bytes + first_read_bytes);
  for (;;) {
    if (buffer.size() == 0 && server.stopping) break;
    request_parser parser;
    parser.header_limit(static_cast<std::uint32_t>(settings.max_header_bytes));
    parser.body_limit(settings.max_body_bytes);
    const error_code read_ec = co_await read_request(server, connection, stream, buffer, parser);
    bool keep_alive = false;
    if (!co_await prepare_answer(server, connection, read_ec, parser, keep_alive)) {
      if (connection.timed_out && connection.first_request) {
        server.note_dropped(dropped_kind::first_request_timeout, connection.peer_address);
      } else if (read_ec && (!connection.timed_out || buffer.size() != 0)) {
        server.log(
            log_level::debug,
            "read ended error=" +
                log_text::value(connection.timed_out ? std::string("timeout") : describe(read_ec)));
      }
      break;
    }
    connection.state = phase::writing;
    connection.set_deadline(clock_type::now() + settings.read_timeout);
    // Counted before the write: a client that has read its answer finds it counted.
    ++server.requests;
    auto [write_ec, written] =
        co_await asio::async_write(stream, asio::buffer(connection.output), use_tuple);
    (void)written;
    if (write_ec) break;
    if (!keep_alive) {
      // After a protocol error the client may still be sending: close without waiting.
      if (!read_ec) co_await close_gracefully(stream);
      break;
    }
  }
}

asio::awaitable<void> run_connection(http_server_state& server, server_connection& connection) {
  connection.first_request_deadline = clock_type::now() + server.settings.first_request_timeout;
  connection.set_deadline(connection.first_request_deadline);
  if (auto* tls = std::get_if<tls_stream>(&connection.stream)) {
    auto [handshake_ec] = co_await tls->async_handshake(ssl::stream_base::server, use_tuple);
    if (handshake_ec && server.stopping && !connection.timed_out) co_return;  // the stop closed it
    if (handshake_ec) {
      // Counted and logged in sums, not per connection: a flood of them is an attack.
      server.note_dropped(dropped_kind::failed_handshake, connection.peer_address);
      if (connection.timed_out) {
        server.note_dropped(dropped_kind::first_request_timeout, connection.peer_address);
      }
      co_return;
    }
    connection.note_client_certificate(*tls);
    co_await serve_requests(server, connection, *tls);
    co_return;
  }
  auto& socket = std::get<tcp::socket>(connection.stream);
  co_await serve_requests(server, connection, socket);
  // The metrics listener always ended with a FIN, whatever ended the loop.
  co_await close_gracefully(socket);
}

asio::awaitable<void> serve_connection(state_ptr server, tcp::socket socket, tcp::endpoint remote) {
  const auto connection = std::make_shared<server_connection>(
      std::move(socket), server->settings.tls.get(), server->settings.read_timeout, remote);
  const connection_registration registration(*server, *connection);
  co_await run_connection(*server, *connection);
}

/// Completion of a detached coroutine: logs what escaped it (a connection must not take down
/// the application's io_context), and ends the accept loop's share of a stop.
struct coroutine_done {
  state_ptr server;
  bool accept_loop;
  void operator()(std::exception_ptr failure) const {
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        server->log(log_level::error, "server coroutine failed what=" + log_text::value(e.what()));
      }
    }
    if (accept_loop) {
      server->accepting = false;
      server->finish_stop_if_done();
    }
  }
};

/// Why an accepted socket must be closed at once, if it must.
std::optional<refusal_reason> refusal_of(http_server_state& server, tcp::socket& socket,
                                         const tcp::endpoint& remote) {
  // Descriptors are handed out lowest first: a high one means few are left for the S3 client.
  if (static_cast<std::uint64_t>(socket.native_handle()) >= server.descriptor_ceiling) {
    return refusal_reason::file_descriptors;
  }
  return server.admission.admit(source_of(remote.address()));
}

/// Takes an accepted socket on or closes it at once (connection_admission.hpp says when).
void admit(const state_ptr& server, tcp::socket socket) {
  ++server->accepted;
  error_code remote_ec;
  const tcp::endpoint remote = socket.remote_endpoint(remote_ec);
  if (remote_ec) return;  // the client is gone already; the socket closes here
  if (const auto refused = refusal_of(*server, socket, remote)) {
    // Counted before the close: a client that sees the close finds it counted.
    server->note_dropped(dropped_kind_of(*refused), remote.address());
    error_code ignored;
    socket.close(ignored);
    return;
  }
  // Answers are small and written at once: without TCP_NODELAY the first answer on a new TLS
  // connection waits ~40 ms for the client's delayed ACK of the session ticket (Nagle).
  error_code nodelay_ignored;
  socket.set_option(tcp::no_delay(true), nodelay_ignored);
  asio::co_spawn(server->strand, serve_connection(server, std::move(socket), remote),
                 coroutine_done{server, false});
}

asio::awaitable<void> accept_connections(state_ptr server) {
  for (;;) {
    auto [ec, socket] = co_await server->acceptor.async_accept(use_tuple);
    if (server->stopping) co_return;
    if (!ec) {
      admit(server, std::move(socket));
      continue;
    }
    if (ec == asio::error::operation_aborted) co_return;
    server->log(log_level::warning, "accept failed error=" + log_text::value(describe(ec)));
    asio::steady_timer backoff(server->strand, accept_backoff);
    auto [timer_ec] = co_await backoff.async_wait(use_tuple);
    (void)timer_ec;
  }
}

/// Runs begin_stop on the strand, then queues the stop's completion.
struct stop_on_strand {
  state_ptr server;
  http_server::stop_handler handler;
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

server_answer plain_text_answer(unsigned status, std::string body) {
  server_answer answer;
  answer.status = status;
  answer.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"Cache-Control", "no-store"}};
  answer.body = std::move(body);
  return answer;
}

http_server::http_server(asio::any_io_executor executor, http_server_settings settings,
                         std::shared_ptr<http_responder> responder)
    : state_(std::make_shared<http_server_state>(std::move(executor), std::move(settings),
                                                 std::move(responder))) {}

http_server::~http_server() {
  asio::post(state_->strand, abort_on_strand{state_});
}

error_code http_server::start() {
  const std::lock_guard lock(state_->start_mutex);
  if (state_->started) return asio::error::already_started;
  if (state_->stopping) return errc::stopped;
  tcp::endpoint bound;
  const error_code ec = listen_on(state_->acceptor, state_->settings.endpoint, bound);
  if (ec) {
    // Returned to the caller, who reports it: only a debug line here.
    state_->log(log_level::debug,
                "server cannot listen address=" + state_->settings.endpoint.address().to_string() +
                    " port=" + std::to_string(state_->settings.endpoint.port()) +
                    " error=" + log_text::value(describe(ec)));
    return ec;
  }
  state_->check_descriptors();
  state_->started = true;
  state_->bound = bound;
  state_->accepting = true;
  state_->log(log_level::info, "server listening address=" + bound.address().to_string() +
                                   " port=" + std::to_string(bound.port()));
  asio::co_spawn(state_->strand, accept_connections(state_), coroutine_done{state_, true});
  return {};
}

tcp::endpoint http_server::local_endpoint() const {
  const std::lock_guard lock(state_->start_mutex);
  return state_->bound;
}

void http_server::stop(stop_handler handler) {
  asio::dispatch(state_->strand, stop_on_strand{state_, std::move(handler)});
}

bool http_server::stopping() const noexcept {
  return state_->stopping;
}

http_server_stats http_server::stats() const {
  const auto count = [this](dropped_kind kind) -> std::uint64_t {
    return state_->dropped[static_cast<std::size_t>(kind)];
  };
  http_server_stats stats;
  stats.accepted_connections = state_->accepted;
  stats.refused_max_connections = count(dropped_kind::refused_max_connections);
  stats.refused_per_source = count(dropped_kind::refused_per_source);
  stats.refused_file_descriptors = count(dropped_kind::refused_file_descriptors);
  stats.rejected_connections =
      stats.refused_max_connections + stats.refused_per_source + stats.refused_file_descriptors;
  stats.failed_handshakes = count(dropped_kind::failed_handshake);
  stats.first_request_timeouts = count(dropped_kind::first_request_timeout);
  stats.requests = state_->requests;
  stats.active_connections = state_->active_connections;
  stats.active_watches = state_->active_watches;
  return stats;
}

}  // namespace s3lect::inline v1::detail
