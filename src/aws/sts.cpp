#include "sts.hpp"

#include "credentials_http.hpp"
#include "credentials_parse.hpp"
#include "sigv4.hpp"

#include <mutex>
#include <optional>
#include <utility>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;
using std::chrono::system_clock;

class web_identity_provider final : public coroutine_provider {
 public:
  web_identity_provider(asio::any_io_executor executor, web_identity_settings settings)
      : coroutine_provider(std::move(executor)), settings_(std::move(settings)) {}

  std::string name() const override { return settings_.provider_label; }

  asio::awaitable<fetch_outcome> fetch() override {
    const std::string& label = settings_.provider_label;
    if (settings_.token_file.empty()) {
      co_return fetch_failure(credentials_errc::not_configured,
                              label + ": AWS_WEB_IDENTITY_TOKEN_FILE is not set");
    }
    if (settings_.role_arn.empty()) {
      co_return fetch_failure(credentials_errc::fetch_failed,
                              label +
                                  ": a web identity token file is set but no role ARN "
                                  "(AWS_ROLE_ARN)");
    }
    std::string problem;
    const std::optional<std::string> token_text = read_small_file(settings_.token_file, problem);
    if (!token_text) {
      if (problem.empty()) problem = "token file " + settings_.token_file + " does not exist";
      co_return fetch_failure(credentials_errc::fetch_failed, label + ": " + problem);
    }
    const std::string_view token = trim_space(*token_text);
    if (token.empty()) {
      co_return fetch_failure(credentials_errc::fetch_failed,
                              label + ": token file " + settings_.token_file + " is empty");
    }

    credentials_http_client* client = http_client(problem);
    if (!client) co_return fetch_failure(credentials_errc::fetch_failed, label + ": " + problem);

    std::string session_name = settings_.session_name;
    if (session_name.empty()) {
      session_name = "s3lect-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                    system_clock::now().time_since_epoch())
                                                    .count());
    }
    http_request request = web_identity_request(settings_.role_arn, session_name, token);
    const exchange_result reply = co_await client->send(std::move(request));
    if (reply.error) {
      co_return fetch_failure(credentials_errc::fetch_failed,
                              label + ": STS at " + origin_text_ + ": " + reply.detail);
    }
    co_return parse_sts_credentials(reply.response.status, reply.response.body, label,
                                    system_clock::now());
  }

 private:
  /// The HTTP client for the STS endpoint, made at the first fetch (it may load TLS roots).
  credentials_http_client* http_client(std::string& problem) {
    std::lock_guard lock(mutex_);
    if (client_) return client_.get();
    const std::string endpoint = sts_endpoint(settings_.env, settings_.region);
    const std::optional<http_url> url = parse_http_url(endpoint, problem);
    if (!url) {
      problem = "STS endpoint " + endpoint + ": " + problem;
      return nullptr;
    }
    try {
      client_ = std::make_unique<credentials_http_client>(executor(), *url, settings_.http_timeout,
                                                          settings_.tls);
    } catch (const std::exception& e) {
      problem = e.what();
      return nullptr;
    }
    origin_text_ = url->origin_text();
    return client_.get();
  }

  web_identity_settings settings_;
  std::mutex mutex_;
  std::unique_ptr<credentials_http_client> client_;
  std::string origin_text_;
};

}  // namespace

std::string sts_endpoint(const environment_snapshot& env, std::string_view region) {
  if (std::string url = env.get("AWS_ENDPOINT_URL_STS"); !url.empty()) return url;
  if (std::string url = env.get("AWS_ENDPOINT_URL"); !url.empty()) return url;
  std::string chosen(region);
  if (chosen.empty()) chosen = env.get("AWS_REGION");
  if (chosen.empty()) chosen = env.get("AWS_DEFAULT_REGION");
  if (chosen.empty() || !is_header_safe(chosen) || chosen.find('/') != std::string::npos) {
    return "https://sts.amazonaws.com";
  }
  return "https://sts." + chosen +
         (chosen.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com");
}

http_request web_identity_request(std::string_view role_arn, std::string_view session_name,
                                  std::string_view token) {
  http_request request;
  request.method = "POST";
  request.target = "/";
  request.body =
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + uri_encode(role_arn, false) +
      "&RoleSessionName=" + uri_encode(session_name, false) +
      "&WebIdentityToken=" + uri_encode(token, false);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
  request.headers.emplace_back("Accept", "application/xml");
  return request;
}

std::shared_ptr<coroutine_provider> make_environment_web_identity_provider(
    asio::any_io_executor executor, const environment_snapshot& env, std::string region,
    std::chrono::milliseconds http_timeout) {
  web_identity_settings settings;
  settings.token_file = env.get("AWS_WEB_IDENTITY_TOKEN_FILE");
  settings.role_arn = env.get("AWS_ROLE_ARN");
  settings.session_name = env.get("AWS_ROLE_SESSION_NAME");
  settings.env = env;
  settings.region = std::move(region);
  settings.http_timeout = http_timeout;
  return std::make_shared<web_identity_provider>(std::move(executor), std::move(settings));
}

std::shared_ptr<coroutine_provider> make_web_identity_provider(asio::any_io_executor executor,
                                                               web_identity_settings settings) {
  return std::make_shared<web_identity_provider>(std::move(executor), std::move(settings));
}

}  // namespace s3lect::inline v1::detail
