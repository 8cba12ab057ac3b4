// The Beast + OpenSSL translation unit of the peer health client (~30 s to compile: keep it
// alone). The answer's meaning lives in peer_response.cpp; this file does TLS, HTTP framing,
// the keep-alive connection, the deadline and cancellation.
#include "peer_client.hpp"

#include <s3lect/error.hpp>

#include "health_protocol.hpp"
#include "tls_context.hpp"
#include "tls_verify.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <openssl/ssl.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <vector>

namespace s3lect::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

/// A health answer's header is a few hundred bytes; anything near this is not a leader talking.
constexpr std::uint32_t max_header_bytes = 16 * 1024;
/// Longest watch asked for (the server caps it far lower); keeps deadlines far from overflow.
constexpr std::chrono::milliseconds max_watch{std::chrono::hours{24}};

using tls_stream = ssl::stream<tcp::socket>;

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "peer_client_config." + message);
}

/// The settings as the one TLS settings type; a peer client always verifies the leader.
tls_config tls_settings(const peer_client_config& config) {
  tls_config tls;
  tls.ca_file = config.ca_file;
  tls.ca_pem = config.ca_pem;
  tls.certificate_file = config.client_cert_file;
  tls.certificate_pem = config.client_cert_pem;
  tls.private_key_file = config.client_key_file;
  tls.private_key_pem = config.client_key_pem;
  return tls;
}

ssl::context make_client_tls_context(const peer_client_config& config) {
  tls_field_names names;
  names.prefix = "peer_client_config.";
  names.certificate_file = "client_cert_file";
  names.certificate_pem = "client_cert_pem";
  names.private_key_file = "client_key_file";
  names.private_key_pem = "client_key_pem";
  return make_tls_context(tls_settings(config), tls_role::client, names);
}

/// Where a leader address points.
struct leader_endpoint {
  std::string host;  ///< A name or an IP literal (IPv6 without brackets).
  std::string port;
  bool is_ip = false;
};

std::optional<leader_endpoint> parse_leader_address(std::string_view address) {
  // Same shape as a bind address, but the host may be a name and the port must not be 0.
  const std::optional<bind_address_parts> parts = split_bind_address(address);
  if (!parts || parts->port == 0) return std::nullopt;
  leader_endpoint endpoint;
  endpoint.host = std::string(parts->host);
  endpoint.port = std::to_string(parts->port);
  const bool printable = std::all_of(endpoint.host.begin(), endpoint.host.end(),
                                     [](char c) { return c > ' ' && c <= '~'; });
  if (!printable) return std::nullopt;
  error_code ec;
  asio::ip::make_address(endpoint.host, ec);
  endpoint.is_ip = !ec;
  // "[name]:port" is not an address anyone writes; brackets are for IPv6 literals only.
  if (address.front() == '[' && !endpoint.is_ip) return std::nullopt;
  return endpoint;
}

/// One keep-alive TLS connection to one leader address, and its read buffer.
struct peer_connection {
  peer_connection(const asio::any_io_executor& executor, ssl::context& tls, std::string to)
      : stream(executor, tls), address(std::move(to)) {}

  /// Makes every pending operation on the connection complete at once: how the deadline,
  /// cancellation and close() interrupt a check.
  void close() {
    error_code ignored;
    stream.next_layer().close(ignored);
  }

  /// An idle HTTP/1.1 connection receives nothing, so a readable socket means the leader
  /// closed it (EOF, reset) or broke the protocol: do not send into it.
  bool idle_and_open() {
    if (buffer.size() != 0 || !stream.next_layer().is_open()) return false;
    if (SSL_pending(stream.native_handle()) != 0) return false;
    pollfd descriptor{stream.next_layer().native_handle(), POLLIN, 0};
    return ::poll(&descriptor, 1, 0) == 0;
  }

  tls_stream stream;
  beast::flat_buffer buffer;
  std::string address;    ///< The leader address as the caller wrote it.
  bool answered = false;  ///< Has carried a complete answer (the TLS session was accepted).
};

/// How one request on one connection went.
struct exchange_outcome {
  errc error{};                   ///< errc{} (0) on success
  std::string detail;             ///< what failed
  bool nothing_received = false;  ///< failed before the first answer byte
  bool keep_alive = false;        ///< the connection may carry another request
  unsigned status = 0;
  std::string watch_header;
  std::string body;
};

/// Maps a failed read of the answer.
errc classify_read_error(const error_code& ec, const peer_connection& connection,
                         bool nothing_received, std::size_t max_body_bytes, std::string& detail) {
  if (ec == http::error::body_limit) {
    detail = "answer body exceeds max_body_bytes (" + std::to_string(max_body_bytes) + ")";
    return errc::body_too_large;
  }
  if (ec == http::error::header_limit) {
    detail = "answer header exceeds " + std::to_string(max_header_bytes) + " bytes";
    return errc::protocol_error;
  }
  if (nothing_received) {
    // In TLS 1.3 a server refuses our certificate (or its absence) after our handshake has
    // completed: its alert arrives where the answer should be.
    if (!connection.answered && ec.category() == asio::error::get_ssl_category()) {
      detail = "the leader refused the TLS session: " + ec.message();
      return errc::tls_handshake_failed;
    }
    detail = "the leader closed the connection before answering: " + ec.message();
    return errc::connection_lost;
  }
  if (ec.category() == http::make_error_code(http::error::bad_version).category()) {
    detail = "malformed answer: " + ec.message();
    return errc::protocol_error;
  }
  if (ec == asio::error::eof || ec == ssl::error::stream_truncated) {
    detail = "truncated answer: " + ec.message();
    return errc::protocol_error;
  }
  detail = "connection lost during the answer: " + ec.message();
  return errc::connection_lost;
}

}  // namespace

class check_operation;

/// What peer_client shares with its operations, which may outlive it.
struct peer_client_state {
  peer_client_state(asio::any_io_executor ex, peer_client_config cfg)
      : executor(std::move(ex)),
        strand(asio::make_strand(executor)),
        config(std::move(cfg)),
        tls(make_client_tls_context(config)) {}

  /// Strand only. The idle connection if it goes to `address` and still looks open; any other
  /// idle connection is closed.
  std::unique_ptr<peer_connection> take_idle(const std::string& address) {
    std::unique_ptr<peer_connection> connection = std::move(idle);
    if (connection && connection->address == address && connection->idle_and_open()) {
      return connection;
    }
    return nullptr;
  }

  /// Strand only. Keeps `connection` as the idle one; the newest wins, as it goes to the
  /// leader most recently asked about.
  void give_back(std::unique_ptr<peer_connection> connection) { idle = std::move(connection); }

  /// Strand only.
  void add_pending(const std::shared_ptr<check_operation>& operation) {
    std::erase_if(pending, [](const std::weak_ptr<check_operation>& p) { return p.expired(); });
    pending.push_back(operation);
  }

  void close_on_strand();

  asio::any_io_executor executor;
  asio::strand<asio::any_io_executor> strand;
  const peer_client_config config;
  ssl::context tls;

  std::unique_ptr<peer_connection> idle;                // strand only
  std::vector<std::weak_ptr<check_operation>> pending;  // strand only

  std::atomic<std::uint64_t> checks{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> connections_opened{0};
  std::atomic<std::uint64_t> failures{0};
};

/// One running check: owns the caller's handler and the deadline, and completes the handler
/// exactly once, whichever of answer, deadline, cancellation and close() comes first. Everything
/// but the constructor and watch_cancellation() runs on the client's strand.
///
/// As in s3_client, the deadline and the caller's cancellation do not wait for the I/O (a
/// resolve cannot be interrupted: getaddrinfo runs on a helper thread): they complete the
/// handler at once and close the socket; the coroutine notices finished() and ends quietly.
class check_operation : public std::enable_shared_from_this<check_operation> {
 public:
  using handler_type = asio::any_completion_handler<peer_client::check_signature>;

  check_operation(std::shared_ptr<peer_client_state> client, std::string address,
                  std::optional<peer_watch> watch, handler_type handler)
      : client_(std::move(client)),
        address_(std::move(address)),
        watch_(watch),
        timer_(client_->strand),
        handler_work_(asio::prefer(asio::get_associated_executor(handler, client_->executor),
                                   asio::execution::outstanding_work.tracked)),
        handler_(std::move(handler)) {}

  peer_client_state& client() const noexcept { return *client_; }
  const std::string& address() const noexcept { return address_; }
  const std::optional<peer_watch>& watch() const noexcept { return watch_; }
  /// True once the handler was completed: the coroutine starts no further I/O.
  bool finished() const noexcept { return finished_; }

  /// Routes the caller's cancellation (any type: a check changes nothing) to abort(); called in
  /// the initiating function, on the erased handler's slot, before anything can complete.
  void watch_cancellation() {
    auto slot = asio::get_associated_cancellation_slot(*handler_);
    if (!slot.is_connected()) return;
    std::weak_ptr<check_operation> weak = shared_from_this();
    slot.assign([weak, strand = client_->strand](asio::cancellation_type type) {
      if (type == asio::cancellation_type::none) return;
      asio::post(strand, [weak] {
        if (auto self = weak.lock()) self->abort(asio::error::operation_aborted, "cancelled");
      });
    });
  }

  /// Starts the deadline covering the whole check.
  void arm_timer(std::chrono::milliseconds limit) {
    std::weak_ptr<check_operation> weak = shared_from_this();
    timer_.expires_after(limit);
    timer_.async_wait([weak, limit](error_code ec) {
      if (ec) return;
      if (auto self = weak.lock()) {
        self->abort(errc::timeout, "no answer within " + std::to_string(limit.count()) +
                                       " ms (while " + self->phase_ + ")");
      }
    });
  }

  /// What the check is doing, for the timeout message.
  void enter(const char* phase) noexcept { phase_ = phase; }

  /// Installs what abort() runs while an I/O step is pending; nullptr removes it.
  void set_abort_hook(std::function<void()> hook) { abort_hook_ = std::move(hook); }

  /// Ends the check with `ec` without waiting for the I/O in flight.
  void abort(error_code ec, std::string message) {
    if (finished_) return;
    if (abort_hook_) {
      auto hook = std::move(abort_hook_);
      abort_hook_ = nullptr;
      hook();
    }
    peer_answer answer;
    answer.message = std::move(message);
    finish(ec, std::move(answer));
  }

  /// Completes the handler with `ec` and `answer` unless it already completed.
  void finish(error_code ec, peer_answer answer) {
    if (finished_) return;
    finished_ = true;
    timer_.cancel();
    account(ec, answer);
    // Move-construct only: move-assigning any_completion_handler recurses in Boost 1.81.
    handler_type handler(std::move(*handler_));
    handler_.reset();
    asio::any_completion_executor work(std::move(handler_work_));
    asio::dispatch(work, [handler = std::move(handler), ec, answer = std::move(answer)]() mutable {
      // Cleared on the handler's executor, where the caller emits (see s3_client.cpp's
      // finish()); an earlier emission reaches abort(), which sees the check finished.
      handler.get_cancellation_slot().clear();
      std::move(handler)(ec, std::move(answer));
    });
  }

  /// Completion of the coroutine: only an exception matters (the coroutine finished the check
  /// otherwise, or it was aborted).
  void on_coroutine_end(std::exception_ptr failure) {
    if (!failure) return;
    std::string what = "internal error";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    abort(errc::protocol_error, std::move(what));
  }

 private:
  void account(const error_code& ec, const peer_answer& answer) {
    if (ec) ++client_->failures;
    const logger& log = client_->config.log;
    if (!log.enabled(log_level::debug)) return;
    const auto elapsed = std::chrono::steady_clock::now() - started_;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f",
                  std::chrono::duration<double, std::milli>(elapsed).count());
    std::string line = "peer check address=" + address_;
    if (watch_) {
      line += " watch_ms=" + std::to_string(watch_->duration.count()) +
              " term=" + std::to_string(watch_->term);
    }
    line += " status=" + std::to_string(answer.http_status) + " ms=" + ms;
    if (ec) {
      line += " result=\"" + ec.message() + "\" detail=\"" + answer.message + "\"";
    } else {
      line += std::string(" result=ok leader=") + (answer.leader ? "true" : "false") +
              " term=" + std::to_string(answer.term) +
              " watch=" + std::string(to_string(answer.watch));
    }
    log.log(log_level::debug, line);
  }

  std::shared_ptr<peer_client_state> client_;
  std::string address_;
  std::optional<peer_watch> watch_;
  asio::steady_timer timer_;
  std::function<void()> abort_hook_;
  const char* phase_ = "starting";
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  asio::any_completion_executor handler_work_;  // before handler_: initialised from it
  std::optional<handler_type> handler_;
  bool finished_ = false;
};

void peer_client_state::close_on_strand() {
  idle.reset();
  std::vector<std::weak_ptr<check_operation>> closing;
  closing.swap(pending);
  for (const std::weak_ptr<check_operation>& weak : closing) {
    if (auto operation = weak.lock()) operation->abort(errc::stopped, "peer client closed");
  }
}

namespace {

using operation_ptr = std::shared_ptr<check_operation>;

/// Installs an abort hook for the duration of one I/O step.
class abort_hook_scope {
 public:
  abort_hook_scope(check_operation& operation, std::function<void()> hook) : operation_(operation) {
    operation_.set_abort_hook(std::move(hook));
  }
  ~abort_hook_scope() { operation_.set_abort_hook(nullptr); }
  abort_hook_scope(const abort_hook_scope&) = delete;
  abort_hook_scope& operator=(const abort_hook_scope&) = delete;

 private:
  check_operation& operation_;
};

/// Resolves, connects and handshakes; on failure finishes the check and returns null (also
/// when the check was finished meanwhile by its deadline, a cancellation or close()).
asio::awaitable<std::unique_ptr<peer_connection>> open_connection(operation_ptr op,
                                                                  leader_endpoint endpoint) {
  peer_client_state& client = op->client();
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);

  tcp::resolver resolver(client.strand);
  tcp::resolver::results_type endpoints;
  {
    op->enter("resolving");
    const abort_hook_scope hook(*op, [&resolver] { resolver.cancel(); });
    const auto flags = endpoint.is_ip ? tcp::resolver::numeric_host : tcp::resolver::flags{};
    endpoints = co_await resolver.async_resolve(endpoint.host, endpoint.port, flags, token);
  }
  if (op->finished()) co_return nullptr;
  if (ec) {
    peer_answer failure;
    failure.message = "cannot resolve " + endpoint.host + ": " + ec.message();
    op->finish(errc::resolve_failed, std::move(failure));
    co_return nullptr;
  }

  auto connection = std::make_unique<peer_connection>(client.strand, client.tls, op->address());
  {
    op->enter("connecting");
    const abort_hook_scope hook(*op, [c = connection.get()] { c->close(); });
    co_await asio::async_connect(connection->stream.next_layer(), endpoints, token);
  }
  if (op->finished()) co_return nullptr;
  if (ec) {
    peer_answer failure;
    failure.message = "cannot connect to " + op->address() + ": " + ec.message();
    op->finish(errc::connect_failed, std::move(failure));
    co_return nullptr;
  }
  ++client.connections_opened;
  error_code ignored;
  connection->stream.next_layer().set_option(tcp::no_delay(true), ignored);

  // SNI carries names only (RFC 6066); an IP literal is verified against the IP SANs.
  if (!endpoint.is_ip &&
      SSL_set_tlsext_host_name(connection->stream.native_handle(), endpoint.host.c_str()) != 1) {
    peer_answer failure;
    failure.message = "cannot set the TLS server name " + endpoint.host;
    op->finish(errc::tls_handshake_failed, std::move(failure));
    co_return nullptr;
  }
  connection->stream.set_verify_callback(verify_host(endpoint.host, endpoint.is_ip));
  {
    op->enter("handshaking");
    const abort_hook_scope hook(*op, [c = connection.get()] { c->close(); });
    co_await connection->stream.async_handshake(ssl::stream_base::client, token);
  }
  if (op->finished()) co_return nullptr;
  if (ec) {
    peer_answer failure;
    const errc error =
        classify_handshake_error(ec, connection->stream.native_handle(), failure.message);
    op->finish(error, std::move(failure));
    co_return nullptr;
  }
  co_return connection;
}

/// Writes the request and reads the answer; returns early once the check was finished by its
/// deadline, a cancellation or close().
asio::awaitable<exchange_outcome> exchange(operation_ptr op, peer_connection& connection,
                                           const http::request<http::empty_body>& request) {
  peer_client_state& client = op->client();
  exchange_outcome out;
  if (op->finished()) co_return out;
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  const abort_hook_scope hook(*op, [c = &connection] { c->close(); });

  op->enter("sending the request");
  ++client.requests;
  co_await http::async_write(connection.stream, request, token);
  if (op->finished()) co_return out;
  if (ec) {
    out.error = errc::connection_lost;
    out.detail = "cannot send the request: " + ec.message();
    out.nothing_received = true;
    co_return out;
  }

  op->enter(op->watch() ? "waiting for the watch to end" : "waiting for the answer");
  http::response_parser<http::string_body> parser;
  parser.header_limit(max_header_bytes);
  parser.body_limit(client.config.max_body_bytes);
  co_await http::async_read(connection.stream, connection.buffer, parser, token);
  if (op->finished()) co_return out;
  if (ec) {
    out.nothing_received = !parser.got_some() && connection.buffer.size() == 0;
    out.error = classify_read_error(ec, connection, out.nothing_received,
                                    client.config.max_body_bytes, out.detail);
    co_return out;
  }

  http::response<http::string_body> answer = parser.release();
  connection.answered = true;
  out.status = answer.result_int();
  out.watch_header = std::string(answer["X-S3lect-Watch"]);
  out.keep_alive = answer.keep_alive() && connection.buffer.size() == 0;
  out.body = std::move(answer.body());
  co_return out;
}

http::request<http::empty_body> make_request(const peer_client_config& config,
                                             const std::string& address,
                                             const std::optional<peer_watch>& watch) {
  std::string target = config.health_path;
  if (watch) {
    target += "?watch=" + std::to_string(watch->duration.count()) +
              "&term=" + std::to_string(watch->term);
    if (watch->serial) target += "&serial=" + std::to_string(*watch->serial);
  }
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, address);
  request.set(http::field::user_agent, "s3lect");
  request.set(http::field::accept, "application/json");
  return request;
}

asio::awaitable<void> run_check(operation_ptr op) {
  peer_client_state& client = op->client();
  client.add_pending(op);

  const std::optional<leader_endpoint> endpoint = parse_leader_address(op->address());
  if (!endpoint) {
    peer_answer invalid;
    // The address comes from another node's record: keep it printable and short in a log.
    std::string shown = op->address().substr(0, 64);
    std::replace_if(
        shown.begin(), shown.end(), [](char c) { return c < ' ' || c > '~'; }, '?');
    invalid.message = "leader address '" + shown + "': not host:port, IPv4:port or [IPv6]:port";
    op->finish(asio::error::invalid_argument, std::move(invalid));
    co_return;
  }
  const std::optional<peer_watch>& watch = op->watch();
  if (watch && (watch->duration.count() < 0 || watch->duration > max_watch)) {
    peer_answer invalid;
    invalid.message =
        "watch duration: must be 0 .. 24 h, is " + std::to_string(watch->duration.count()) + " ms";
    op->finish(asio::error::invalid_argument, std::move(invalid));
    co_return;
  }
  op->arm_timer(client.config.timeout + (watch ? watch->duration : std::chrono::milliseconds{0}));

  const http::request<http::empty_body> request = make_request(client.config, op->address(), watch);
  for (bool resent = false;;) {
    std::unique_ptr<peer_connection> connection = client.take_idle(op->address());
    const bool reused = connection != nullptr;
    if (!connection) {
      connection = co_await open_connection(op, *endpoint);
      if (!connection) co_return;
    }

    exchange_outcome outcome = co_await exchange(op, *connection, request);
    if (op->finished()) co_return;
    // A reused connection that fails before any answer byte was most likely closed by the
    // leader while idle (a race the idle check cannot close): a plain check, which changes
    // nothing, is resent once on a new connection. Not a watch: there the same failure is how
    // a crashed leader shows itself, and it must be reported at once.
    if (outcome.error != errc{} && reused && outcome.nothing_received && !watch && !resent) {
      resent = true;
      client.config.log.log(
          log_level::debug,
          "peer connection closed by the leader while idle; resending address=" + op->address());
      continue;
    }
    if (outcome.error != errc{}) {
      peer_answer failure;
      failure.message = std::move(outcome.detail);
      op->finish(outcome.error, std::move(failure));
      co_return;
    }

    peer_parsing parsing = parse_peer_response(outcome.status, outcome.watch_header, outcome.body,
                                               client.config.max_body_bytes);
    if (outcome.keep_alive) client.give_back(std::move(connection));
    op->finish(parsing.error, std::move(parsing.answer));
    co_return;
  }
}

/// co_spawn's completion handler for a check's coroutine.
struct coroutine_end {
  operation_ptr op;
  void operator()(std::exception_ptr failure) const { op->on_coroutine_end(failure); }
};

struct close_on_strand {
  std::shared_ptr<peer_client_state> state;
  void operator()() const { state->close_on_strand(); }
};

bool printable_path(const std::string& path) {
  return std::all_of(path.begin(), path.end(),
                     [](char c) { return c > ' ' && c <= '~' && c != '?' && c != '#'; });
}

}  // namespace

std::optional<std::string> peer_client_config::validate() const {
  if (!client_cert_file.empty() && !client_cert_pem.empty()) {
    return "client_cert_file: set together with client_cert_pem; set one of them";
  }
  if (!client_key_file.empty() && !client_key_pem.empty()) {
    return "client_key_file: set together with client_key_pem; set one of them";
  }
  const bool has_certificate = !client_cert_file.empty() || !client_cert_pem.empty();
  const bool has_key = !client_key_file.empty() || !client_key_pem.empty();
  if (has_certificate && !has_key) return "client_key_pem: required with a client certificate";
  if (has_key && !has_certificate) return "client_cert_pem: required with a client key";
  if (health_path.empty() || health_path.front() != '/') {
    return "health_path: must start with '/'";
  }
  if (health_path.size() > 1024 || !printable_path(health_path)) {
    return "health_path: must be at most 1024 printable ASCII characters without space, '?' "
           "or '#'";
  }
  if (timeout <= std::chrono::milliseconds::zero()) {
    return "timeout: must be greater than 0 ms, is " + std::to_string(timeout.count()) + " ms";
  }
  if (timeout > max_watch) return "timeout: must be at most 24 h";
  if (max_body_bytes == 0) return "max_body_bytes: must be greater than 0";
  return std::nullopt;
}

peer_client::peer_client(executor_type executor, peer_client_config config) {
  if (auto error = config.validate()) throw_config(*error);
  state_ = std::make_shared<peer_client_state>(std::move(executor), std::move(config));
}

peer_client::~peer_client() {
  asio::post(state_->strand, close_on_strand{state_});
}

peer_client::executor_type peer_client::get_executor() const {
  return state_->executor;
}

const peer_client_config& peer_client::config() const noexcept {
  return state_->config;
}

void peer_client::close() {
  asio::post(state_->strand, close_on_strand{state_});
}

peer_client_stats peer_client::stats() const {
  peer_client_stats stats;
  stats.checks = state_->checks;
  stats.requests = state_->requests;
  stats.connections_opened = state_->connections_opened;
  stats.failures = state_->failures;
  return stats;
}

void peer_client::check_impl(std::string leader_addr, std::optional<peer_watch> watch,
                             asio::any_completion_handler<check_signature> handler) {
  ++state_->checks;
  auto op =
      std::make_shared<check_operation>(state_, std::move(leader_addr), watch, std::move(handler));
  op->watch_cancellation();
  asio::co_spawn(state_->strand, run_check(op), coroutine_end{op});
}

}  // namespace s3lect::detail
