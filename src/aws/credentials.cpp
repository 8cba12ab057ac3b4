// The credentials error category, the static and environment providers, and the default chain.
// The plumbing they share is in credentials_detail.cpp.
#include <s3lect/credentials.hpp>

#include "aws_profile.hpp"
#include "credentials_container.hpp"
#include "credentials_detail.hpp"
#include "imds.hpp"
#include "log_text.hpp"
#include "sts.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <vector>

namespace s3lect::inline v1 {
namespace {

namespace asio = boost::asio;

class credentials_category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "s3lect.credentials"; }

  std::string message(int value) const override {
    switch (static_cast<credentials_errc>(value)) {
      case credentials_errc::not_configured:
        return "credential provider not configured";
      case credentials_errc::no_credentials:
        return "no AWS credentials found";
      case credentials_errc::fetch_failed:
        return "fetching AWS credentials failed";
      case credentials_errc::malformed:
        return "malformed AWS credentials";
      case credentials_errc::unsupported:
        return "unsupported AWS credential configuration";
    }
    return "unknown credentials error " + std::to_string(value);
  }
};

class static_provider final : public credentials_provider {
 public:
  static_provider(asio::any_io_executor executor, aws_credentials credentials)
      : executor_(std::move(executor)), credentials_(std::move(credentials)) {
    if (credentials_.provider.empty()) credentials_.provider = "explicit";
  }

  std::string name() const override { return credentials_.provider; }

 protected:
  void fetch_impl(asio::any_completion_handler<credentials_signature> handler) override {
    credentials_result result;
    result.credentials = credentials_;
    detail::post_completion(std::move(handler), executor_, {}, std::move(result));
  }

 private:
  asio::any_io_executor executor_;
  aws_credentials credentials_;
};

/// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
class environment_provider final : public detail::coroutine_provider {
 public:
  environment_provider(asio::any_io_executor executor, const detail::environment_snapshot& env)
      : coroutine_provider(std::move(executor)),
        key_id_(env.get("AWS_ACCESS_KEY_ID")),
        secret_(env.get("AWS_SECRET_ACCESS_KEY")),
        token_(env.get("AWS_SESSION_TOKEN")) {}

  std::string name() const override { return "environment"; }

  asio::awaitable<detail::fetch_outcome> fetch() override {
    if (key_id_.empty() && secret_.empty()) {
      co_return detail::fetch_failure(
          credentials_errc::not_configured,
          "environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set");
    }
    if (key_id_.empty() || secret_.empty()) {
      co_return detail::fetch_failure(
          credentials_errc::malformed,
          std::string("environment: ") +
              (key_id_.empty() ? "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
                               : "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
    }
    aws_credentials credentials;
    credentials.access_key_id = key_id_;
    credentials.secret_access_key = secret_;
    credentials.session_token = token_;
    credentials.provider = "environment";
    if (std::string problem =
            detail::credentials_problem(credentials, std::chrono::system_clock::now());
        !problem.empty()) {
      co_return detail::fetch_failure(credentials_errc::malformed, "environment: " + problem);
    }
    co_return detail::fetch_success(std::move(credentials));
  }

 private:
  std::string key_id_;
  std::string secret_;
  std::string token_;
};

/// Asks each provider in turn; the first that applies decides.
class chain_provider final : public detail::coroutine_provider {
 public:
  chain_provider(asio::any_io_executor executor,
                 std::vector<std::shared_ptr<credentials_provider>> providers, logger log)
      : coroutine_provider(std::move(executor)),
        providers_(std::move(providers)),
        log_(std::move(log)) {}

  std::string name() const override { return "default chain"; }

  asio::awaitable<detail::fetch_outcome> fetch() override {
    std::string skipped;
    for (const auto& provider : providers_) {
      auto [ec, result] = co_await provider->async_fetch(asio::as_tuple(asio::use_awaitable));
      if (ec == credentials_errc::not_configured) {
        log_.log(log_level::debug,
                 "credentials provider skipped detail=" + log_text::value(result.message));
        if (!skipped.empty()) skipped += "; ";
        skipped += result.message;
        continue;
      }
      detail::fetch_outcome decided;
      decided.ec = ec;
      decided.result = std::move(result);
      co_return decided;
    }
    co_return detail::fetch_failure(credentials_errc::no_credentials,
                                    "no provider applies (" + skipped + ")");
  }

 private:
  std::vector<std::shared_ptr<credentials_provider>> providers_;
  logger log_;
};

}  // namespace

const boost::system::error_category& credentials_category() noexcept {
  static const credentials_category_impl instance;
  return instance;
}

std::shared_ptr<credentials_provider> make_static_credentials_provider(
    asio::any_io_executor executor, aws_credentials credentials) {
  return std::make_shared<static_provider>(std::move(executor), std::move(credentials));
}

std::shared_ptr<credentials_provider> make_default_credentials_chain(
    asio::any_io_executor executor, credentials_chain_options options) {
  const detail::environment_snapshot env = detail::environment_snapshot::capture();
  std::vector<std::shared_ptr<credentials_provider>> providers;
  providers.push_back(std::make_shared<environment_provider>(executor, env));
  providers.push_back(detail::make_environment_web_identity_provider(executor, env, options.region,
                                                                     options.http_timeout));
  detail::profile_provider_settings profile;
  profile.profile = options.profile;
  profile.env = env;
  profile.sts_region = options.region;
  profile.http_timeout = options.http_timeout;
  providers.push_back(detail::make_profile_provider(executor, std::move(profile)));
  providers.push_back(detail::make_container_provider(
      executor, detail::container_endpoint_from(env), options.http_timeout));
  detail::imds_settings imds = detail::imds_settings_from(env);
  imds.http_timeout = options.http_timeout;
  imds.token_ttl = options.imds_token_ttl;
  providers.push_back(detail::make_imds_provider(executor, std::move(imds)));
  return std::make_shared<chain_provider>(std::move(executor), std::move(providers),
                                          std::move(options.log));
}

}  // namespace s3lect::inline v1
