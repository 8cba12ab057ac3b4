// The built-in Entra ID token providers (workload identity, managed identity) and the default
// chain. Each fetch runs as a coroutine on a fresh strand over credentials_http_client, the
// HTTP plumbing the AWS providers use. Protocol sources: entra_token.hpp.
#include <s3lect/azure_credentials.hpp>

#include "credentials_detail.hpp"
#include "credentials_http.hpp"
#include "entra_token.hpp"
#include "manual_clock.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <cstdlib>
#include <exception>
#include <mutex>

namespace s3lect::inline v1 {
namespace {

namespace asio = boost::asio;
using detail::token_failure;
using detail::token_outcome;

/// The variable's value; unset and empty are the same, as in the Azure SDKs.
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

/// Base of the built-in providers: fetch() runs on a strand while a shared_ptr keeps the
/// provider alive; its outcome completes the handler through the handler's executor.
class coroutine_token_provider : public azure_token_provider,
                                 public std::enable_shared_from_this<coroutine_token_provider> {
 public:
  explicit coroutine_token_provider(asio::any_io_executor executor)
      : executor_(std::move(executor)) {}

  const asio::any_io_executor& executor() const noexcept { return executor_; }

  /// "Now" on the executor's clock: a test's manual clock, else the system clock.
  std::chrono::system_clock::time_point now() const {
    return detail::clock_source::of(executor_).wall_now();
  }

  /// The fetch itself; runs on a strand.
  virtual asio::awaitable<token_outcome> fetch() = 0;

 protected:
  void fetch_impl(asio::any_completion_handler<azure_token_signature> handler) final {
    auto box = std::make_shared<handler_box>(std::move(handler));
    asio::co_spawn(asio::make_strand(executor_), run_fetch(shared_from_this()),
                   deliver{std::move(box), executor_, name()});
  }

 private:
  // co_spawn's completion handler is copied around; the move-only handler waits in a box.
  struct handler_box {
    explicit handler_box(asio::any_completion_handler<azure_token_signature> h)
        : handler(std::move(h)) {}
    asio::any_completion_handler<azure_token_signature> handler;
  };

  struct deliver {
    std::shared_ptr<handler_box> box;
    asio::any_io_executor executor;
    std::string provider;
    void operator()(std::exception_ptr failure, token_outcome outcome) const {
      if (failure) {
        outcome = token_failure(credentials_errc::fetch_failed, provider + ": internal error");
      }
      asio::post(executor,
                 asio::append(std::move(box->handler), outcome.ec, std::move(outcome.token)));
    }
  };

  static asio::awaitable<token_outcome> run_fetch(std::shared_ptr<coroutine_token_provider> self) {
    co_return co_await self->fetch();
  }

  asio::any_io_executor executor_;
};

/// One HTTP client for one token URL, made at the first fetch (it may load TLS roots).
class lazy_token_client {
 public:
  lazy_token_client(std::string url, std::chrono::milliseconds timeout, tls_config tls)
      : url_(std::move(url)), timeout_(timeout), tls_(std::move(tls)) {}

  /// The client, or nullptr with `problem` set; `target` is the URL's path and query.
  detail::credentials_http_client* get(const asio::any_io_executor& executor, std::string& target,
                                       std::string& problem) {
    std::lock_guard lock(mutex_);
    if (!client_) {
      const std::optional<detail::http_url> url = detail::parse_http_url(url_, problem);
      if (!url) {
        problem = "token URL: " + problem;
        return nullptr;
      }
      try {
        client_ = std::make_unique<detail::credentials_http_client>(executor, *url, timeout_, tls_);
      } catch (const std::exception& e) {
        problem = e.what();
        return nullptr;
      }
      target_ = url->target;
      origin_ = url->origin_text();
    }
    target = target_;
    return client_.get();
  }

  /// `scheme://host[:port]` of the URL, for messages; empty before the first get().
  std::string origin() const {
    std::lock_guard lock(mutex_);
    return origin_;
  }

 private:
  std::string url_;
  std::chrono::milliseconds timeout_;
  tls_config tls_;
  mutable std::mutex mutex_;
  std::unique_ptr<detail::credentials_http_client> client_;
  std::string target_;
  std::string origin_;
};

class workload_identity_provider final : public coroutine_token_provider {
 public:
  workload_identity_provider(asio::any_io_executor executor, azure_workload_identity_options o)
      : coroutine_token_provider(std::move(executor)),
        options_(std::move(o)),
        client_(detail::workload_identity_token_url(options_.authority_host, options_.tenant_id),
                options_.http_timeout, options_.tls) {}

  std::string name() const override { return "workload-identity"; }

  asio::awaitable<token_outcome> fetch() override {
    const std::string label = name();
    std::string problem = configuration_problem();
    if (!problem.empty())
      co_return token_failure(credentials_errc::not_configured, label + problem);
    // Read at every fetch: the kubelet rotates the projected service account token.
    const std::optional<std::string> file = detail::read_small_file(options_.token_file, problem);
    if (!file && problem.empty()) problem = "token file " + options_.token_file + " does not exist";
    const std::string_view assertion = file ? detail::trim_space(*file) : std::string_view();
    if (file && assertion.empty()) problem = "token file " + options_.token_file + " is empty";
    if (!problem.empty())
      co_return token_failure(credentials_errc::fetch_failed, label + ": " + problem);

    detail::http_request request;
    detail::credentials_http_client* client = client_.get(executor(), request.target, problem);
    if (!client) co_return token_failure(credentials_errc::fetch_failed, label + ": " + problem);
    request.method = "POST";
    request.body = detail::workload_identity_form(options_.client_id, assertion);
    request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    request.headers.emplace_back("Accept", "application/json");
    const detail::exchange_result reply = co_await client->send(std::move(request));
    if (reply.error) {
      co_return token_failure(credentials_errc::fetch_failed,
                              label + ": Entra ID at " + client_.origin() + ": " + reply.detail);
    }
    co_return detail::parse_token_answer(reply.response.status, reply.response.body, label, now());
  }

 private:
  /// ": VARIABLE is not set" for the first missing setting, or "".
  std::string configuration_problem() const {
    if (options_.token_file.empty()) return ": AZURE_FEDERATED_TOKEN_FILE is not set";
    if (options_.client_id.empty()) return ": AZURE_CLIENT_ID is not set";
    if (options_.tenant_id.empty()) return ": AZURE_TENANT_ID is not set";
    return {};
  }

  azure_workload_identity_options options_;
  lazy_token_client client_;
};

class managed_identity_provider final : public coroutine_token_provider {
 public:
  managed_identity_provider(asio::any_io_executor executor, azure_managed_identity_options o)
      : coroutine_token_provider(std::move(executor)),
        options_(std::move(o)),
        app_service_(!options_.identity_endpoint.empty() && !options_.identity_header.empty()),
        client_(token_url(), options_.http_timeout, {}) {}

  std::string name() const override { return "managed-identity"; }

  asio::awaitable<token_outcome> fetch() override {
    const std::string label = name();
    std::string problem;
    detail::http_request request;
    detail::credentials_http_client* client = client_.get(executor(), request.target, problem);
    if (!client) co_return token_failure(credentials_errc::fetch_failed, label + ": " + problem);
    request.method = "GET";
    if (app_service_) {
      request.headers.emplace_back("X-IDENTITY-HEADER", options_.identity_header);
    } else {
      request.headers.emplace_back("Metadata", "true");  // IMDS refuses requests without it
    }
    const detail::exchange_result reply = co_await client->send(std::move(request));
    const std::string where =
        (app_service_ ? "the App Service identity endpoint at " : "IMDS at ") + client_.origin();
    if (reply.error) {
      co_return token_failure(credentials_errc::fetch_failed,
                              label + ": " + where + ": " + reply.detail);
    }
    co_return detail::parse_token_answer(reply.response.status, reply.response.body, label, now());
  }

 private:
  std::string token_url() const {
    if (app_service_) {
      const char separator = options_.identity_endpoint.find('?') == std::string::npos ? '?' : '&';
      return options_.identity_endpoint + separator +
             detail::managed_identity_query("2019-08-01", options_.client_id);
    }
    std::string origin = options_.imds_endpoint;
    while (origin.ends_with('/')) origin.pop_back();
    return origin + "/metadata/identity/oauth2/token?" +
           detail::managed_identity_query("2018-02-01", options_.client_id);
  }

  azure_managed_identity_options options_;
  bool app_service_;
  lazy_token_client client_;
};

}  // namespace

azure_workload_identity_options azure_workload_identity_options::from_environment() {
  azure_workload_identity_options options;
  options.token_file = environment("AZURE_FEDERATED_TOKEN_FILE");
  options.client_id = environment("AZURE_CLIENT_ID");
  options.tenant_id = environment("AZURE_TENANT_ID");
  options.authority_host = environment("AZURE_AUTHORITY_HOST");
  return options;
}

azure_managed_identity_options azure_managed_identity_options::from_environment() {
  azure_managed_identity_options options;
  options.client_id = environment("AZURE_CLIENT_ID");
  options.identity_endpoint = environment("IDENTITY_ENDPOINT");
  options.identity_header = environment("IDENTITY_HEADER");
  return options;
}

std::shared_ptr<azure_token_provider> make_azure_workload_identity_provider(
    asio::any_io_executor executor, azure_workload_identity_options options) {
  return std::make_shared<workload_identity_provider>(std::move(executor), std::move(options));
}

std::shared_ptr<azure_token_provider> make_azure_managed_identity_provider(
    asio::any_io_executor executor, azure_managed_identity_options options) {
  return std::make_shared<managed_identity_provider>(std::move(executor), std::move(options));
}

std::shared_ptr<azure_token_provider> make_azure_default_token_chain(
    asio::any_io_executor executor, azure_token_chain_options options) {
  if (!environment("AZURE_FEDERATED_TOKEN_FILE").empty()) {
    auto workload = azure_workload_identity_options::from_environment();
    workload.http_timeout = options.http_timeout;
    workload.tls = std::move(options.tls);
    return make_azure_workload_identity_provider(std::move(executor), std::move(workload));
  }
  auto managed = azure_managed_identity_options::from_environment();
  managed.http_timeout = options.http_timeout;
  return make_azure_managed_identity_provider(std::move(executor), std::move(managed));
}

}  // namespace s3lect::inline v1
