#include "credentials_container.hpp"

#include "credentials_http.hpp"
#include "credentials_parse.hpp"

#include <mutex>
#include <optional>
#include <utility>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;

constexpr std::string_view label = "container";

std::string with_label(std::string_view text) {
  return std::string(label) + ": " + std::string(text);
}

/// Hosts a plain-http full URI may name.
bool is_allowed_http_host(const endpoint_url& origin) {
  const std::string& host = origin.host;
  if (origin.host_is_ipv4) {
    return host.starts_with("127.") || host == "169.254.170.2" || host == "169.254.170.23";
  }
  if (origin.host_is_ipv6) return host == "::1" || host == "fd00:ec2::23";
  return host == "localhost";
}

class container_provider final : public coroutine_provider {
 public:
  container_provider(asio::any_io_executor executor, container_endpoint endpoint,
                     std::chrono::milliseconds http_timeout)
      : coroutine_provider(std::move(executor)),
        endpoint_(std::move(endpoint)),
        http_timeout_(http_timeout) {}

  std::string name() const override { return std::string(label); }

  asio::awaitable<fetch_outcome> fetch() override {
    if (!endpoint_.configured) {
      co_return fetch_failure(
          credentials_errc::not_configured,
          with_label("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI are not set"));
    }
    if (!endpoint_.problem.empty()) {
      co_return fetch_failure(credentials_errc::fetch_failed, endpoint_.problem);
    }

    std::string authorization = endpoint_.token;
    std::string problem;
    if (!endpoint_.token_file.empty()) {
      const std::optional<std::string> text = read_small_file(endpoint_.token_file, problem);
      if (!text) {
        if (problem.empty()) problem = "token file " + endpoint_.token_file + " does not exist";
        co_return fetch_failure(credentials_errc::fetch_failed, with_label(problem));
      }
      authorization = std::string(trim_space(*text));
    }
    for (unsigned char c : authorization) {
      if (c < ' ' || c == 0x7f) {
        co_return fetch_failure(credentials_errc::fetch_failed,
                                with_label("the authorization token contains control characters"));
      }
    }

    std::string target;
    credentials_http_client* client = http_client(target, problem);
    if (!client) co_return fetch_failure(credentials_errc::fetch_failed, with_label(problem));

    http_request request;
    request.method = "GET";
    request.target = std::move(target);
    request.headers.emplace_back("Accept", "application/json");
    if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
    const exchange_result reply = co_await client->send(std::move(request));
    if (reply.error) {
      co_return fetch_failure(credentials_errc::fetch_failed,
                              with_label(origin_ + ": " + reply.detail));
    }
    if (reply.response.status != 200) {
      std::string text = origin_ + " answered HTTP " + std::to_string(reply.response.status);
      if (const std::string why = describe_json_error(reply.response.body); !why.empty()) {
        text += ": " + why;
      }
      co_return fetch_failure(credentials_errc::fetch_failed, with_label(text));
    }
    co_return parse_json_credentials(reply.response.body, label, std::chrono::system_clock::now());
  }

 private:
  credentials_http_client* http_client(std::string& target, std::string& problem) {
    std::lock_guard lock(mutex_);
    if (!client_) {
      const std::optional<http_url> url = parse_http_url(endpoint_.url, problem);
      if (!url) return nullptr;  // container_endpoint_from() checked it
      try {
        client_ = std::make_unique<credentials_http_client>(executor(), *url, http_timeout_);
      } catch (const std::exception& e) {
        problem = e.what();
        return nullptr;
      }
      origin_ = url->origin_text();
      target_ = url->target;
    }
    target = target_;
    return client_.get();
  }

  container_endpoint endpoint_;
  std::chrono::milliseconds http_timeout_;
  std::mutex mutex_;
  std::unique_ptr<credentials_http_client> client_;
  std::string origin_;
  std::string target_;
};

}  // namespace

container_endpoint container_endpoint_from(const environment_snapshot& env) {
  container_endpoint endpoint;
  endpoint.token_file = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  if (endpoint.token_file.empty()) endpoint.token = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN");

  const std::string relative = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const std::string full = env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (relative.empty() && full.empty()) return endpoint;
  endpoint.configured = true;

  std::string problem;
  if (!relative.empty()) {
    endpoint.url = "http://169.254.170.2" + (relative.front() == '/' ? relative : "/" + relative);
    if (!parse_http_url(endpoint.url, problem)) {
      endpoint.problem = with_label("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: " + problem);
    }
    return endpoint;
  }
  endpoint.url = full;
  const std::optional<http_url> url = parse_http_url(full, problem);
  if (!url) {
    endpoint.problem = with_label("AWS_CONTAINER_CREDENTIALS_FULL_URI: " + problem);
  } else if (!url->origin.tls && !is_allowed_http_host(url->origin)) {
    endpoint.problem = with_label(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI: plain http is allowed only to a loopback address, "
        "169.254.170.2, 169.254.170.23 or fd00:ec2::23, not " +
        url->origin.host);
  }
  return endpoint;
}

std::shared_ptr<coroutine_provider> make_container_provider(
    asio::any_io_executor executor, container_endpoint endpoint,
    std::chrono::milliseconds http_timeout) {
  return std::make_shared<container_provider>(std::move(executor), std::move(endpoint),
                                              http_timeout);
}

}  // namespace s3lect::inline v1::detail
