// The Beast + OpenSSL translation unit of every HTTP client (compiles in ~30-80 s: keep it
// alone).
#include "http_client.hpp"

#include <s3lect/error.hpp>

#include "beast_names.hpp"
#include "platform.hpp"
#include "streamed_bodies.hpp"
#include "tls_context.hpp"
#include "tls_identity.hpp"
#include "tls_verify.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <openssl/ssl.h>
#include <poll.h>
#if S3LECT_LINUX_FACILITIES
#include <netinet/in.h>
#include <netinet/tcp.h>
#endif

#include <atomic>
#include <mutex>
#include <optional>
#include <variant>

namespace s3lect::inline v1::detail {

namespace {

using request_message = http::request<spliced_body>;

/// One TCP or TLS connection and the read buffer that belongs to it.
struct connection {
  template <class... Args>
  explicit connection(Args&&... args) : stream(std::forward<Args>(args)...) {}

  std::variant<tcp::socket, tls_stream> stream;
  beast::flat_buffer buffer;
  bool answered = false;  ///< has carried a complete reply (the TLS session was accepted)

  tcp::socket& socket() {
    if (auto* tls = std::get_if<tls_stream>(&stream)) return tls->next_layer();
    return std::get<tcp::socket>(stream);
  }

  /// Acknowledges the next segments at once instead of after the delayed-ACK timer. A server
  /// that sends its reply in two segments (the local radosgw does) waits for the ACK of the
  /// first before it sends the second: without this every reply on a kept-alive connection
  /// stalls ~40 ms. Linux leaves quick-ACK mode on its own, so it is set again before each
  /// read; elsewhere a no-op (docs/operations.md, Other systems).
  void acknowledge_promptly() {
#if S3LECT_LINUX_FACILITIES
    const int on = 1;
    ::setsockopt(socket().native_handle(), IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
#endif
  }

  /// Closing the socket makes every pending operation on it complete at once, whatever layer
  /// (TLS, HTTP) started it: that is how timeouts and cancellation interrupt a request.
  void close() {
    error_code ignored;
    socket().close(ignored);
  }

  /// An idle HTTP/1.1 connection receives nothing, so a readable socket means the server closed
  /// it (EOF or reset) or broke the protocol. Checked before reuse to avoid sending a request
  /// into a connection that is already gone, which for a PUT would be ambiguous.
  bool idle_and_open() {
    if (buffer.size() != 0 || !socket().is_open()) return false;
    if (auto* tls = std::get_if<tls_stream>(&stream); tls && SSL_pending(tls->native_handle())) {
      return false;
    }
    pollfd descriptor{socket().native_handle(), POLLIN, 0};
    return ::poll(&descriptor, 1, 0) == 0;
  }
};

/// Installs an abort hook for the duration of one I/O step.
class abort_hook_scope {
 public:
  abort_hook_scope(request_control& control, std::function<void()> hook) : control_(control) {
    control_.set_abort_hook(std::move(hook));
  }
  ~abort_hook_scope() { control_.set_abort_hook(nullptr); }
  abort_hook_scope(const abort_hook_scope&) = delete;
  abort_hook_scope& operator=(const abort_hook_scope&) = delete;

 private:
  request_control& control_;
};

/// Maps a failed read of the reply. `nothing_received`: not a single reply byte arrived.
errc classify_read_error(const error_code& ec, const connection& conn, bool nothing_received,
                         const http_client_settings& settings, std::string& detail) {
  if (ec == http::error::body_limit) {
    detail = "reply body exceeds max_body_bytes (" + std::to_string(settings.max_body_bytes) + ")";
    return errc::body_too_large;
  }
  if (ec == http::error::header_limit) {
    detail = "reply header exceeds " + std::to_string(settings.max_header_bytes) + " bytes";
    return errc::protocol_error;
  }
  if (nothing_received) {
    // In TLS 1.3 a server refuses our certificate (or its absence) after our handshake has
    // completed: its alert arrives where the reply should be.
    if (!conn.answered && ec.category() == asio::error::get_ssl_category()) {
      detail = "the server refused the TLS session: " + ec.message();
      return errc::tls_handshake_failed;
    }
    detail = "connection closed before the reply: " + ec.message();
    return errc::connection_lost;
  }
  if (ec == http::error::partial_message || ec == http::error::end_of_stream ||
      ec == asio::error::eof || ec == ssl::error::stream_truncated) {
    detail = "truncated reply: " + ec.message();
    return errc::protocol_error;
  }
  if (ec.category() == make_error_code(http::error::bad_version).category()) {
    detail = "malformed reply: " + ec.message();
    return errc::protocol_error;
  }
  detail = "connection lost during the reply: " + ec.message();
  return errc::connection_lost;
}

bool is_ip_literal(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

/// host:port as written in a URL, for messages.
std::string authority(const std::string& host, bool is_ip, const std::string& port) {
  const bool ipv6 = is_ip && host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + port;
}

request_message to_message(http_request& request) {
  request_message message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  for (const auto& [name, value] : request.headers) message.insert(name, value);
  message.body().head = std::move(request.body);
  message.body().file_path = std::move(request.body_file);
  message.body().file_size = request.body_file_size;
  message.body().file_offset = request.body_file_offset;
  message.body().on_progress = request.on_progress;
  message.prepare_payload();
  return message;
}

/// One attempt on one connection.
struct attempt {
  exchange_result result;
  bool nothing_received = false;  ///< failed before the first reply byte
  bool write_failed = false;      ///< the request did not leave whole: the server cannot act on it
  bool keep_alive = false;        ///< the connection may carry another request
};

}  // namespace

std::string_view http_response::header(std::string_view name) const {
  for (const auto& [field, value] : headers) {
    if (beast::iequals(field, name)) return value;
  }
  return {};
}

struct http_client::impl {
  impl(asio::any_io_executor ex, http_client_settings config)
      : executor(std::move(ex)),
        settings(std::move(config)),
        port_text(std::to_string(settings.port)),
        host_is_ip(is_ip_literal(settings.host)),
        tls_context(settings.tls ? settings.tls_context : nullptr),
        counters(settings.counters ? settings.counters : std::make_shared<http_client_counters>()) {
    if (settings.tls && !tls_context) {
      tls_context = make_shared_tls_context(settings.tls_settings, tls_role::client,
                                            settings.tls_field_prefix);
    }
  }

  /// With a pin: the handshake proved that the server holds the private key of the certificate
  /// it sent; this checks that it is the key the pin names.
  bool pin_matches(tls_stream& tls, exchange_result& failure) const {
    if (settings.key_pin.empty()) return true;
    X509* certificate = SSL_get0_peer_certificate(tls.native_handle());
    if (public_key_pin(certificate) == settings.key_pin) return true;
    failure.error = errc::tls_verification_failed;
    failure.detail = "the server's key does not have the pin " + settings.key_pin;
    return false;
  }

  asio::awaitable<std::unique_ptr<connection>> open(std::shared_ptr<request_control> control,
                                                    exchange_result& failure);
  asio::awaitable<tcp::resolver::results_type> resolve(std::shared_ptr<request_control> control,
                                                       exchange_result& failure);
  asio::awaitable<bool> handshake(tls_stream& tls, connection& conn,
                                  std::shared_ptr<request_control> control,
                                  exchange_result& failure);
  asio::awaitable<attempt> round_trip(connection& conn, const request_message& message,
                                      const reply_body::value_type& reply_shape,
                                      std::shared_ptr<request_control> control);
  template <class Stream>
  asio::awaitable<attempt> round_trip_on(Stream& stream, connection& conn,
                                         const request_message& message,
                                         const reply_body::value_type& reply_shape,
                                         std::shared_ptr<request_control> control);

  std::unique_ptr<connection> take_idle() {
    std::lock_guard lock(mutex);
    // Most recently used first: the one least likely to have hit the server's idle timeout.
    while (!idle.empty()) {
      std::unique_ptr<connection> conn = std::move(idle.back());
      idle.pop_back();
      if (conn->idle_and_open()) return conn;
    }
    return nullptr;
  }

  /// The newest wins: it is the one least likely to hit the server's idle timeout.
  void give_back(std::unique_ptr<connection> conn) {
    std::unique_ptr<connection> dropped;
    std::lock_guard lock(mutex);
    if (settings.max_idle_connections == 0) return;
    if (idle.size() >= settings.max_idle_connections) {
      dropped = std::move(idle.front());
      idle.erase(idle.begin());
    }
    idle.push_back(std::move(conn));
  }

  asio::any_io_executor executor;
  http_client_settings settings;
  std::string port_text;
  bool host_is_ip;
  std::shared_ptr<ssl::context> tls_context;
  std::shared_ptr<http_client_counters> counters;
  std::mutex mutex;
  std::vector<std::unique_ptr<connection>> idle;
};

asio::awaitable<tcp::resolver::results_type> http_client::impl::resolve(
    std::shared_ptr<request_control> control, exchange_result& failure) {
  error_code ec;
  tcp::resolver resolver(executor);
  tcp::resolver::results_type endpoints;
  if (host_is_ip) {
    // An IP literal needs no lookup: getaddrinfo with AI_NUMERICHOST answers at once, here,
    // instead of on the helper thread Asio's asynchronous resolve starts (no hidden thread, and
    // no wait on another thread's scheduling before the connect starts).
    endpoints = resolver.resolve(settings.host, port_text,
                                 tcp::resolver::numeric_host | tcp::resolver::numeric_service, ec);
  } else {
    // A resolve in progress cannot be interrupted (getaddrinfo runs on a helper thread); the
    // owner completes the operation at the deadline anyway and this coroutine ends later.
    control->phase = "resolving";
    abort_hook_scope hook(*control, [&resolver] { resolver.cancel(); });
    endpoints = co_await resolver.async_resolve(settings.host, port_text, tcp::resolver::flags{},
                                                asio::redirect_error(asio::use_awaitable, ec));
  }
  if (ec && !control->aborted()) {
    failure.error = errc::resolve_failed;
    failure.detail = "cannot resolve " + settings.host + ": " + ec.message();
  }
  co_return endpoints;
}

asio::awaitable<bool> http_client::impl::handshake(tls_stream& tls, connection& conn,
                                                   std::shared_ptr<request_control> control,
                                                   exchange_result& failure) {
  // SNI carries names only (RFC 6066); an IP endpoint is verified against its IP SAN.
  if (!host_is_ip && SSL_set_tlsext_host_name(tls.native_handle(), settings.host.c_str()) != 1) {
    failure.error = errc::tls_handshake_failed;
    failure.detail = "cannot set TLS server name " + settings.host;
    co_return false;
  }
  if (settings.tls_settings.verify_peer)
    tls.set_verify_callback(verify_host(settings.host, host_is_ip));
  error_code ec;
  {
    control->phase = "handshaking";
    abort_hook_scope hook(*control, [c = &conn] { c->close(); });
    co_await tls.async_handshake(ssl::stream_base::client,
                                 asio::redirect_error(asio::use_awaitable, ec));
  }
  if (control->aborted()) co_return false;
  if (ec) {
    failure.error = classify_handshake_error(ec, tls.native_handle(), failure.detail);
    co_return false;
  }
  co_return pin_matches(tls, failure);
}

asio::awaitable<std::unique_ptr<connection>> http_client::impl::open(
    std::shared_ptr<request_control> control, exchange_result& failure) {
  const tcp::resolver::results_type endpoints = co_await resolve(control, failure);
  if (control->aborted() || failure.error) co_return nullptr;

  auto conn = tls_context ? std::make_unique<connection>(std::in_place_type<tls_stream>, executor,
                                                         *tls_context)
                          : std::make_unique<connection>(std::in_place_type<tcp::socket>, executor);
  error_code ec;
  {
    control->phase = "connecting";
    abort_hook_scope hook(*control, [c = conn.get()] { c->close(); });
    co_await asio::async_connect(conn->socket(), endpoints,
                                 asio::redirect_error(asio::use_awaitable, ec));
  }
  if (control->aborted()) co_return nullptr;
  if (ec) {
    failure.error = errc::connect_failed;
    failure.detail = "cannot connect to " + authority(settings.host, host_is_ip, port_text) + ": " +
                     ec.message();
    co_return nullptr;
  }
  ++counters->connections_opened;
  error_code ignored;
  conn->socket().set_option(tcp::no_delay(true), ignored);

  if (auto* tls = std::get_if<tls_stream>(&conn->stream)) {
    if (!co_await handshake(*tls, *conn, control, failure)) co_return nullptr;
  }
  co_return conn;
}

asio::awaitable<attempt> http_client::impl::round_trip(connection& conn,
                                                       const request_message& message,
                                                       const reply_body::value_type& reply_shape,
                                                       std::shared_ptr<request_control> control) {
  if (auto* tls = std::get_if<tls_stream>(&conn.stream)) {
    co_return co_await round_trip_on(*tls, conn, message, reply_shape, std::move(control));
  }
  co_return co_await round_trip_on(std::get<tcp::socket>(conn.stream), conn, message, reply_shape,
                                   std::move(control));
}

namespace {

/// A complete reply (or one the body's limit truncated) as an attempt's outcome.
attempt received(http::response<reply_body>& reply, connection& conn,
                 std::chrono::steady_clock::time_point started) {
  attempt out;
  conn.answered = true;
  out.result.round_trip = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started);
  out.result.response.status = reply.result_int();
  for (const auto& field : reply) {
    out.result.response.headers.emplace_back(std::string(field.name_string()),
                                             std::string(field.value()));
  }
  out.result.response.truncated = reply.body().truncated;
  // A truncated reply left the rest of its body unread on the connection.
  out.keep_alive = reply.keep_alive() && conn.buffer.size() == 0 && !reply.body().truncated;
  out.result.response.body = std::move(reply.body().text);
  return out;
}

/// The reply body as `request` wants it kept or streamed.
reply_body::value_type reply_body_for(const http_request& request,
                                      const http_client_settings& settings) {
  reply_body::value_type body;
  body.limit = settings.max_body_bytes;
  body.truncate = request.truncate_long_reply;
  body.sink = request.reply_sink;
  body.on_progress = request.on_progress;
  return body;
}

}  // namespace

template <class Stream>
asio::awaitable<attempt> http_client::impl::round_trip_on(
    Stream& stream, connection& conn, const request_message& message,
    const reply_body::value_type& reply_shape, std::shared_ptr<request_control> control) {
  attempt out;
  error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  abort_hook_scope hook(*control, [c = &conn] { c->close(); });

  const auto started = std::chrono::steady_clock::now();
  control->phase = "sending the request";
  control->may_be_delivered = true;
  ++counters->requests_sent;
  co_await http::async_write(stream, message, token);
  if (control->aborted()) co_return out;
  if (ec) {
    // Some bytes never reached the kernel, so the server never saw the whole request (S3 acts
    // only on complete requests: it checks Content-Length and the payload hash).
    control->may_be_delivered = false;
    out.write_failed = true;
    out.nothing_received = true;
    out.result.error = errc::connection_lost;
    out.result.detail = "cannot send the request: " + ec.message();
    co_return out;
  }

  control->phase = control->waiting_phase;
  conn.acknowledge_promptly();
  http::response_parser<reply_body> parser;
  parser.get().body() = reply_shape;
  parser.header_limit(settings.max_header_bytes);
  // The body type enforces the limit itself where it truncates or streams.
  if (reply_shape.sink || reply_shape.truncate) {
    parser.body_limit(boost::none);
  } else {
    parser.body_limit(settings.max_body_bytes);
  }
  co_await http::async_read(stream, conn.buffer, parser, token);
  if (control->aborted()) co_return out;
  if (ec == errc::body_too_large && parser.get().body().truncated) ec = {};
  if (ec) {
    out.nothing_received = !parser.got_some() && conn.buffer.size() == 0;
    if (const error_code refused = parser.get().body().sink_error) {
      out.result.error = refused;
      out.result.detail = "the reply body could not be taken: " + refused.message();
      co_return out;
    }
    out.result.error =
        classify_read_error(ec, conn, out.nothing_received, settings, out.result.detail);
    co_return out;
  }
  co_return received(parser.get(), conn, started);
}

http_client::http_client(asio::any_io_executor executor, http_client_settings settings)
    : impl_(std::make_unique<impl>(std::move(executor), std::move(settings))) {}

http_client::~http_client() = default;

asio::awaitable<exchange_result> http_client::exchange(std::shared_ptr<request_control> control,
                                                       http_request request, replay_policy replay) {
  const reply_body::value_type reply_shape = reply_body_for(request, impl_->settings);
  const request_message message = to_message(request);
  // Aborted before the first step could install its abort hook.
  if (control->aborted()) co_return exchange_result{};
  for (bool resent = false;;) {
    std::unique_ptr<connection> conn = impl_->take_idle();
    const bool reused = conn != nullptr;
    if (!conn) {
      exchange_result failure;
      conn = co_await impl_->open(control, failure);
      if (!conn) co_return failure;
    }

    attempt outcome = co_await impl_->round_trip(*conn, message, reply_shape, control);
    if (control->aborted()) co_return std::move(outcome.result);

    // A reused connection that fails before any reply byte was most likely closed by the server
    // while idle (the race the idle check cannot close). Resending once is what browsers and
    // SDKs do; for a PUT only when the write itself failed, since a PUT that was written whole
    // may have been applied, and its owner must then be told the outcome is unknown. A long
    // poll is never resent: there the same failure is how a crashed server shows itself.
    const bool closed_while_idle = reused && outcome.nothing_received;
    const bool may_resend = replay == replay_policy::idempotent ||
                            (replay == replay_policy::unless_written && outcome.write_failed);
    if (closed_while_idle && !resent && may_resend) {
      resent = true;
      impl_->settings.log.log(
          log_level::debug,
          impl_->settings.name + " idle connection closed by the server; resending on a new one");
      continue;
    }
    if (!outcome.result.error && outcome.keep_alive) impl_->give_back(std::move(conn));
    co_return std::move(outcome.result);
  }
}

void http_client::close_idle() {
  std::vector<std::unique_ptr<connection>> closing;
  std::lock_guard lock(impl_->mutex);
  closing.swap(impl_->idle);
}

std::uint64_t http_client::connections_opened() const noexcept {
  return impl_->counters->connections_opened;
}

std::uint64_t http_client::requests_sent() const noexcept {
  return impl_->counters->requests_sent;
}

}  // namespace s3lect::inline v1::detail
