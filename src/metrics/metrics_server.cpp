// The metrics listener: one route answered with what `render` returns, through the one HTTP
// server skeleton (net/http_server.cpp), in plain HTTP. A scraper that needs TLS scrapes the
// health server's /metrics instead.
#include <s3lect/error.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>

#include "health_protocol.hpp"
#include "http_server.hpp"
#include "listener_settings.hpp"
#include "log_text.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <mutex>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "metrics_server_config." + message);
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
  if (auto error = detail::check_connection_limits(*this)) return error;
  return std::nullopt;
}

namespace detail {

/// What the metrics listener answers: `render` at the configured path, 404 elsewhere.
class metrics_responder final : public http_responder {
 public:
  explicit metrics_responder(const metrics_server_config& config)
      : path_(config.path), render_(config.render), liveness_(config.liveness), log_(config.log) {}

  std::optional<server_answer> answer_at_once(const server_request& request) override {
    const bool head = request.method == "HEAD";
    if (request.method != "GET" && !head) {
      server_answer answer = plain_text_answer(405, "method not allowed\n");
      answer.headers.emplace_back("Allow", "GET, HEAD");
      return answer;
    }
    const std::string_view target = request.target;
    const std::string_view path = target.substr(0, target.find('?'));
    if (liveness_ && (path == "/healthz" || path == "/readyz")) {
      server_answer answer = probe_answer(path == "/healthz");
      answer.head = head;
      return answer;
    }
    if (path != path_) return plain_text_answer(404, "not found\n");
    std::string body;
    try {
      const std::lock_guard lock(render_mutex_);
      if (detached_) return plain_text_answer(503, "stopped\n");
      body = render_();
    } catch (const std::exception& e) {
      log_.log(log_level::error, "metrics rendering failed what=" + log_text::value(e.what()));
      return plain_text_answer(500, "metrics unavailable\n");
    }
    server_answer answer = plain_text_answer(200, std::move(body));
    answer.headers.front().second = std::string(prometheus_content_type);
    answer.head = head;
    return answer;
  }

  asio::awaitable<server_answer> answer_later(server_request request) override {
    co_return *answer_at_once(request);  // every answer is given at once
  }

  server_answer reject(unsigned status, std::string problem) override {
    if (status == 431) return plain_text_answer(431, "request header fields too large\n");
    return plain_text_answer(400, problem + "\n");
  }

  /// /healthz (`live`) or /readyz: 200 when the report says so, else 503.
  server_answer probe_answer(bool live) {
    liveness_report report;
    try {
      const std::lock_guard lock(render_mutex_);
      if (detached_) return plain_text_answer(503, "stopped\n");
      report = liveness_();
    } catch (const std::exception& e) {
      log_.log(log_level::error, "liveness check failed what=" + log_text::value(e.what()));
      return plain_text_answer(500, "liveness unavailable\n");
    }
    const bool ok = live ? report.live : report.ready;
    return plain_text_answer(ok ? 200 : 503, report.description + "\n");
  }

  /// From here on `render`, which may refer to objects dying after us, is not called.
  void detach() {
    const std::lock_guard lock(render_mutex_);
    detached_ = true;
  }

 private:
  const std::string path_;
  const std::function<std::string()> render_;
  const std::function<liveness_report()> liveness_;
  const logger log_;
  /// Held while rendering, so that once the server is destroyed render is no longer called.
  std::mutex render_mutex_;
  bool detached_ = false;  // guarded by render_mutex_
};

struct metrics_server_state {
  metrics_server_state(asio::any_io_executor ex, const metrics_server_config& config)
      : executor(std::move(ex)),
        responder(std::make_shared<metrics_responder>(config)),
        server(executor, listener_settings(config, "metrics"), responder) {}

  asio::any_io_executor executor;
  std::shared_ptr<metrics_responder> responder;
  http_server server;
};

}  // namespace detail

metrics_server::metrics_server(executor_type executor, metrics_server_config config) {
  if (auto error = config.validate()) throw_config(*error);
  state_ = std::make_shared<detail::metrics_server_state>(std::move(executor), config);
}

metrics_server::~metrics_server() {
  state_->responder->detach();
}

metrics_server::executor_type metrics_server::get_executor() const {
  return state_->executor;
}

error_code metrics_server::start() {
  return state_->server.start();
}

tcp::endpoint metrics_server::local_endpoint() const {
  return state_->server.local_endpoint();
}

server_stats metrics_server::stats() const {
  return state_->server.stats();
}

void metrics_server::stop_impl(stop_handler handler) {
  state_->server.stop(std::move(handler));
}

}  // namespace s3lect::inline v1
