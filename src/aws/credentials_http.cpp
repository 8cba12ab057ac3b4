#include "credentials_http.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <memory>

namespace s3lect::inline v1::detail {
namespace {

http_client_settings settings_for(const http_url& origin, tls_config tls) {
  http_client_settings settings;
  settings.host = origin.origin.host;
  settings.port = origin.origin.port;
  settings.tls = origin.origin.tls;
  settings.tls_settings = std::move(tls);
  // Credential documents are a few kilobytes; a large body is not a credential endpoint.
  settings.max_body_bytes = 64 * 1024;
  settings.max_idle_connections = 2;
  return settings;
}

}  // namespace

std::string http_url::origin_text() const {
  std::string text = origin.tls ? "https://" : "http://";
  text += host_header;
  return text;
}

std::optional<http_url> parse_http_url(std::string_view url, std::string& problem) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    problem = "must start with http:// or https://";
    return std::nullopt;
  }
  for (unsigned char c : url) {
    if (c <= ' ' || c == 0x7f) {
      problem = "must not contain spaces or control characters";
      return std::nullopt;
    }
  }
  if (url.find('#') != std::string_view::npos) {
    problem = "must not have a fragment";
    return std::nullopt;
  }
  const std::size_t authority_start = scheme_end + 3;
  const std::size_t path_start = url.find_first_of("/?", authority_start);
  const std::string_view origin_part = url.substr(0, path_start);
  std::optional<endpoint_url> origin = parse_endpoint_url(origin_part, problem);
  if (!origin) return std::nullopt;

  http_url result;
  result.origin = std::move(*origin);
  if (path_start != std::string_view::npos) {
    std::string target(url.substr(path_start));
    if (target.front() == '?') target.insert(target.begin(), '/');
    result.target = std::move(target);
  }
  result.host_header =
      result.origin.host_is_ipv6 ? "[" + result.origin.host + "]" : result.origin.host;
  if (!result.origin.default_port()) {
    result.host_header += ":" + std::to_string(result.origin.port);
  }
  return result;
}

credentials_http_client::credentials_http_client(boost::asio::any_io_executor executor,
                                                 const http_url& origin,
                                                 std::chrono::milliseconds timeout, tls_config tls)
    : host_header_(origin.host_header),
      timeout_(timeout),
      pool_(std::move(executor), settings_for(origin, std::move(tls))) {}

boost::asio::awaitable<exchange_result> credentials_http_client::send(http_request request) {
  request.headers.emplace(request.headers.begin(), "Host", host_header_);
  request.headers.emplace_back("User-Agent", "s3lect");

  auto control = std::make_shared<request_control>();
  const auto executor = co_await boost::asio::this_coro::executor;
  boost::asio::steady_timer deadline(executor);
  if (timeout_.count() > 0) {
    deadline.expires_after(timeout_);
    // Runs on the caller's strand, like the exchange: abort() closes the socket at once.
    deadline.async_wait([control](boost::system::error_code ec) {
      if (!ec) control->abort();
    });
  }
  exchange_result result =
      co_await pool_.exchange(control, std::move(request), replay_policy::idempotent);
  deadline.cancel();
  if (control->aborted()) {
    exchange_result timed_out;
    timed_out.error = errc::timeout;
    timed_out.detail = "no answer within " + std::to_string(timeout_.count()) + " ms";
    co_return timed_out;
  }
  co_return result;
}

void credentials_http_client::close_idle() {
  pool_.close_idle();
}

}  // namespace s3lect::inline v1::detail
