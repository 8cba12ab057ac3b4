// The standalone health server: the health endpoint (health_handler) and an optional /metrics
// route, answered through the one HTTP server skeleton (net/http_server.cpp), over TLS.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>

#include "health_protocol.hpp"
#include "http_server.hpp"
#include "listener_settings.hpp"
#include "log_text.hpp"
#include "tls_context.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <mutex>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

/// Named once: GCC 12 mishandles temporaries built inside a co_await expression
/// (docs/architecture.md#gcc-12-coroutine-rules).
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "health_server_config." + message);
}

detail::server_answer to_answer(health_response response) {
  detail::server_answer answer;
  answer.status = response.status;
  answer.headers = std::move(response.headers);
  answer.body = std::move(response.body);
  return answer;
}

detail::http_server_settings server_settings(const health_server_config& config) {
  detail::http_server_settings settings = detail::listener_settings(config, "health");
  settings.max_watches = config.handler.max_watchers;
  settings.tls = detail::make_shared_tls_context(config.tls, detail::tls_role::server,
                                                 "health_server_config.tls.");
  return settings;
}

}  // namespace

namespace detail {

/// What the health server answers: the health endpoint, and /metrics when configured.
class health_responder final : public http_responder {
 public:
  health_responder(asio::any_io_executor executor, leadership_source& source,
                   const health_server_config& config)
      : handler(std::move(executor), source, config.handler),
        metrics_(config.metrics),
        log_(config.log) {}

  std::optional<server_answer> answer_at_once(const server_request& request) override {
    if (is_metrics_request(request)) return metrics_answer(request);
    const auto route = route_request(request.method, request.target, handler.config().path);
    if (route.type == routed_request::kind::watch) return std::nullopt;
    // Answered at once: no coroutine, strand hop or type-erased handler per request.
    // With its source and certificate: a claim the request carries is judged by them.
    const health_request question{request.method, request.target, request.source,
                                  request.verified_client, request.client_names};
    return to_answer(handler.handle(question));
  }

  asio::awaitable<server_answer> answer_later(server_request request) override {
    const health_request question{std::move(request.method), std::move(request.target),
                                  std::move(request.source), request.verified_client,
                                  std::move(request.client_names)};
    auto [ec, response] = co_await handler.async_handle(question, use_tuple);
    if (ec) {
      server_answer none;  // the server is being destroyed
      none.send = false;
      co_return none;
    }
    co_return to_answer(std::move(response));
  }

  server_answer reject(unsigned status, std::string problem) override {
    return to_answer(status == 431 ? header_too_large_response() : bad_request_response(problem));
  }

  void stopping() override { handler.stop(); }

  /// From here on the metrics are not rendered: what they read may die right after us.
  void detach_metrics() {
    const std::lock_guard lock(metrics_mutex_);
    metrics_detached_ = true;
  }

  health_handler handler;

 private:
  bool is_metrics_request(const server_request& request) const {
    if (!metrics_) return false;
    const std::string_view target = request.target;
    return target.substr(0, target.find('?')) == health_server_config::metrics_path;
  }

  /// The answer to a request of the metrics route (GET or HEAD; a HEAD without the body).
  server_answer metrics_answer(const server_request& request) {
    const bool head = request.method == "HEAD";
    if (request.method != "GET" && !head) {
      server_answer answer = plain_text_answer(405, "method not allowed\n");
      answer.headers.emplace_back("Allow", "GET, HEAD");
      return answer;
    }
    std::string body;
    bool rendered = false;
    try {
      const std::lock_guard lock(metrics_mutex_);
      if (!metrics_detached_) {
        body = metrics_();
        rendered = true;
      }
    } catch (const std::exception& e) {
      log_.log(log_level::error, "metrics rendering failed what=" + log_text::value(e.what()));
    }
    if (!rendered) return plain_text_answer(500, "metrics unavailable\n");
    server_answer answer = plain_text_answer(200, std::move(body));
    answer.headers.front().second = "text/plain; version=0.0.4; charset=utf-8";
    answer.head = head;
    return answer;
  }

  const std::function<std::string()> metrics_;
  const logger log_;
  /// Held while rendering the metrics, so that once destruction began they are not rendered.
  std::mutex metrics_mutex_;
  bool metrics_detached_ = false;  // guarded by metrics_mutex_
};

struct health_server_state {
  health_server_state(asio::any_io_executor ex, leadership_source& source,
                      health_server_config config, std::string key_pin)
      : executor(std::move(ex)),
        responder(std::make_shared<health_responder>(executor, source, config)),
        server(executor, server_settings(config), responder),
        source(source),
        key_pin(std::move(key_pin)),
        publish_endpoint(config.publish_endpoint),
        log(std::move(config.log)) {}

  asio::any_io_executor executor;
  std::shared_ptr<health_responder> responder;
  http_server server;
  leadership_source& source;
  /// Zero-configuration TLS: the pin of the certificate made at construction; else empty.
  std::string key_pin;
  /// health_server_config::publish_endpoint.
  bool publish_endpoint;
  logger log;
};

}  // namespace detail

health_server::health_server(executor_type executor, leadership_source& source,
                             health_server_config config) {
  if (auto error = config.validate()) throw_config(*error);
  std::string pin = adopt_self_signed_identity(config.tls);
  state_ = std::make_shared<detail::health_server_state>(std::move(executor), source,
                                                         std::move(config), std::move(pin));
}

health_server::~health_server() {
  // From here on no coroutine may touch the source, which may die right after us.
  state_->responder->handler.detach();
  state_->responder->detach_metrics();
}

health_server::executor_type health_server::get_executor() const {
  return state_->executor;
}

error_code health_server::start() {
  if (const error_code ec = state_->server.start()) return ec;
  if (state_->key_pin.empty() && !state_->publish_endpoint) return {};
  if (auto problem = state_->source.publish_peer_endpoint(state_->key_pin, local_endpoint())) {
    // The server still answers; followers without the pin fall back to S3.
    state_->log.log(log_level::warning,
                    "cannot publish the peer endpoint error=" + log_text::value(*problem));
  }
  return {};
}

tcp::endpoint health_server::local_endpoint() const {
  return state_->server.local_endpoint();
}

void health_server::stop_impl(stop_handler handler) {
  state_->server.stop(std::move(handler));
}

health_server_stats health_server::stats() const {
  health_server_stats stats = state_->server.stats();
  // The handler's count: watches beyond its cap are answered at once, not held.
  stats.active_watches = state_->responder->handler.active_watches();
  return stats;
}

}  // namespace s3lect::inline v1
