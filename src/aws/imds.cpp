#include "imds.hpp"

#include "credentials_http.hpp"
#include "credentials_parse.hpp"
#include "manual_clock.hpp"
#include "sigv4.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;

constexpr std::string_view label = "imds";
constexpr std::string_view ttl_header = "X-aws-ec2-metadata-token-ttl-seconds";
constexpr std::string_view token_header = "X-aws-ec2-metadata-token";

std::string with_label(std::string_view text) {
  return std::string(label) + ": " + std::string(text);
}

/// The TTL the service granted, from its reply header; nullopt when absent or unreadable.
std::optional<std::chrono::seconds> granted_ttl(const http_response& response) {
  const std::string_view text = response.header(ttl_header);
  long seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || seconds < 1) {
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

class imds_provider final : public coroutine_provider {
 public:
  imds_provider(asio::any_io_executor executor, imds_settings settings)
      : coroutine_provider(executor),
        settings_(std::move(settings)),
        clock_(clock_source::of(executor)) {}

  std::string name() const override { return std::string(label); }

  asio::awaitable<fetch_outcome> fetch() override {
    if (settings_.disabled) {
      co_return fetch_failure(credentials_errc::not_configured,
                              with_label("disabled by AWS_EC2_METADATA_DISABLED"));
    }
    std::string problem;
    credentials_http_client* client = origin_client(problem);
    if (!client) co_return fetch_failure(credentials_errc::fetch_failed, with_label(problem));

    // A 401 means the service no longer knows our token (it expired early, or the instance
    // restarted its metadata service): get a fresh one and try once more.
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::string token;
      if (std::optional<fetch_outcome> failed = co_await obtain_token(*client, token)) {
        co_return std::move(*failed);
      }

      const std::string roles_path = path_prefix_ + "/latest/meta-data/iam/security-credentials/";
      http_request roles_request = authorized_get(roles_path, token);
      exchange_result roles = co_await client->send(std::move(roles_request));
      if (roles.error) co_return transport_failure("role query", roles);
      if (roles.response.status == 401) {
        tokens_.clear();
        continue;
      }
      if (roles.response.status == 404) {
        co_return fetch_failure(credentials_errc::not_configured,
                                with_label("no IAM role is attached to this instance"));
      }
      if (roles.response.status != 200) co_return status_failure("role query", roles);
      const std::string_view listing = roles.response.body;
      const std::string_view role = trim_space(listing.substr(0, listing.find('\n')));
      if (role.empty()) {
        co_return fetch_failure(credentials_errc::not_configured,
                                with_label("no IAM role is attached to this instance"));
      }

      http_request credentials_request =
          authorized_get(roles_path + uri_encode(role, false), token);
      exchange_result credentials = co_await client->send(std::move(credentials_request));
      if (credentials.error) co_return transport_failure("credentials query", credentials);
      if (credentials.response.status == 401) {
        tokens_.clear();
        continue;
      }
      if (credentials.response.status != 200) {
        co_return status_failure("credentials query for role " + std::string(role), credentials);
      }
      co_return parse_json_credentials(credentials.response.body, label, clock_.wall_now());
    }
    co_return fetch_failure(credentials_errc::fetch_failed,
                            with_label("the service refused two fresh session tokens (HTTP 401)"));
  }

 private:
  /// The cached session token, else a new one (IMDSv2); the failure to report when none.
  asio::awaitable<std::optional<fetch_outcome>> obtain_token(credentials_http_client& client,
                                                             std::string& token) {
    if (std::optional<std::string> cached = tokens_.get(clock_.now())) {
      token = std::move(*cached);
      co_return std::nullopt;
    }
    http_request token_request;
    token_request.method = "PUT";
    token_request.target = path_prefix_ + "/latest/api/token";
    token_request.headers.emplace_back(std::string(ttl_header),
                                       std::to_string(settings_.token_ttl.count()));
    const exchange_result reply = co_await client.send(std::move(token_request));
    if (reply.error) {
      // At the default address this is what a machine outside EC2 sees.
      co_return fetch_failure(
          settings_.endpoint_configured ? credentials_errc::fetch_failed
                                        : credentials_errc::not_configured,
          with_label("no instance metadata service at " + origin_ + ": " + reply.detail));
    }
    if (reply.response.status != 200) {
      co_return fetch_failure(
          credentials_errc::fetch_failed,
          with_label("session token request (IMDSv2) refused with HTTP " +
                     std::to_string(reply.response.status) + "; IMDSv1 is not used"));
    }
    const std::string_view granted = trim_space(reply.response.body);
    if (granted.empty() || !is_header_safe(granted)) {
      co_return fetch_failure(credentials_errc::malformed, with_label("malformed session token"));
    }
    const std::chrono::seconds ttl = granted_ttl(reply.response).value_or(settings_.token_ttl);
    tokens_.put(std::string(granted), ttl, clock_.now());
    token = std::string(granted);
    co_return std::nullopt;
  }

  static http_request authorized_get(std::string target, const std::string& token) {
    http_request request;
    request.method = "GET";
    request.target = std::move(target);
    request.headers.emplace_back(std::string(token_header), token);
    return request;
  }

  static fetch_outcome transport_failure(std::string_view what, const exchange_result& reply) {
    return fetch_failure(credentials_errc::fetch_failed,
                         with_label(std::string(what) + ": " + reply.detail));
  }

  static fetch_outcome status_failure(std::string_view what, const exchange_result& reply) {
    return fetch_failure(
        credentials_errc::fetch_failed,
        with_label(std::string(what) + " answered HTTP " + std::to_string(reply.response.status)));
  }

  credentials_http_client* origin_client(std::string& problem) {
    std::lock_guard lock(mutex_);
    if (client_) return client_.get();
    const std::optional<http_url> url = parse_http_url(settings_.endpoint, problem);
    if (!url) {
      problem = "endpoint " + settings_.endpoint + ": " + problem;
      return nullptr;
    }
    try {
      client_ = std::make_unique<credentials_http_client>(executor(), *url, settings_.http_timeout);
    } catch (const std::exception& e) {
      problem = e.what();
      return nullptr;
    }
    origin_ = url->origin_text();
    path_prefix_ = url->target;
    while (!path_prefix_.empty() && path_prefix_.back() == '/') path_prefix_.pop_back();
    return client_.get();
  }

  imds_settings settings_;
  // The token's TTL and the credentials' checks: real time, or a test's manual clock.
  clock_source clock_;
  imds_token_cache tokens_;
  std::mutex mutex_;
  std::unique_ptr<credentials_http_client> client_;
  std::string origin_;
  std::string path_prefix_;
};

}  // namespace

std::optional<std::string> imds_token_cache::get(clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (token_.empty() || now >= good_until_) return std::nullopt;
  return token_;
}

void imds_token_cache::put(std::string token, std::chrono::seconds ttl, clock::time_point now) {
  const clock::duration lifetime = ttl;
  const clock::duration margin = std::min<clock::duration>(lifetime / 4, std::chrono::minutes(1));
  std::lock_guard lock(mutex_);
  token_ = std::move(token);
  good_until_ = now + lifetime - margin;
}

void imds_token_cache::clear() {
  std::lock_guard lock(mutex_);
  token_.clear();
}

std::string imds_endpoint(const environment_snapshot& env) {
  if (std::string configured = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT"); !configured.empty()) {
    return configured;
  }
  std::string mode = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
  for (char& c : mode) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return mode == "ipv6" ? "http://[fd00:ec2::254]" : "http://169.254.169.254";
}

bool imds_disabled(const environment_snapshot& env) {
  return is_true_text(env.get("AWS_EC2_METADATA_DISABLED"));
}

imds_settings imds_settings_from(const environment_snapshot& env) {
  imds_settings settings;
  settings.endpoint = imds_endpoint(env);
  settings.endpoint_configured = !env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT").empty();
  settings.disabled = imds_disabled(env);
  return settings;
}

std::shared_ptr<coroutine_provider> make_imds_provider(asio::any_io_executor executor,
                                                       imds_settings settings) {
  return std::make_shared<imds_provider>(std::move(executor), std::move(settings));
}

}  // namespace s3lect::inline v1::detail
