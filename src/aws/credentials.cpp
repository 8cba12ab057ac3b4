// The credentials error category, the provider plumbing, the static and environment providers,
// and the default chain.
#include <s3lect/credentials.hpp>

#include "aws_profile.hpp"
#include "credentials_container.hpp"
#include "credentials_detail.hpp"
#include "imds.hpp"
#include "sts.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

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

/// Every variable a provider, the profile lookup or the endpoint choice reads.
constexpr const char* captured_variables[] = {
    "HOME",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_STS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_EC2_METADATA_DISABLED",
};

/// co_spawn's completion handler for coroutine_provider: delivers the outcome.
struct deliver_outcome {
  struct box {
    explicit box(asio::any_completion_handler<credentials_signature> h) : handler(std::move(h)) {}
    asio::any_completion_handler<credentials_signature> handler;
  };
  std::shared_ptr<box> target;
  asio::any_io_executor executor;
  std::string provider_name;

  void operator()(std::exception_ptr error, detail::fetch_outcome outcome) const {
    if (error) {
      std::string what = "internal error";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what += std::string(": ") + e.what();
      } catch (...) {
      }
      outcome = detail::fetch_failure(credentials_errc::fetch_failed, provider_name + ": " + what);
    }
    detail::post_completion(std::move(target->handler), executor, outcome.ec,
                            std::move(outcome.result));
  }
};

asio::awaitable<detail::fetch_outcome> run_fetch(std::shared_ptr<detail::coroutine_provider> self) {
  co_return co_await self->fetch();
}

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
                 "credentials provider skipped detail=\"" + result.message + "\"");
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

namespace detail {

fetch_outcome fetch_failure(credentials_errc code, std::string message) {
  fetch_outcome outcome;
  outcome.ec = code;
  outcome.result.message = std::move(message);
  return outcome;
}

fetch_outcome fetch_success(aws_credentials credentials) {
  fetch_outcome outcome;
  outcome.result.credentials = std::move(credentials);
  return outcome;
}

environment_snapshot environment_snapshot::capture() {
  environment_snapshot snapshot;
  for (const char* name : captured_variables) {
    if (const char* value = std::getenv(name); value && *value) snapshot.set(name, value);
  }
  return snapshot;
}

environment_snapshot& environment_snapshot::set(std::string name, std::string value) {
  values_[std::move(name)] = std::move(value);
  return *this;
}

std::string environment_snapshot::get(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::string() : it->second;
}

bool is_true_text(std::string_view value) {
  if (value.size() != 4) return false;
  std::string lower(value);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower == "true";
}

std::optional<std::string> read_small_file(const std::string& path, std::string& problem,
                                           std::size_t max_bytes) {
  // POSIX I/O, not std::ifstream: a file stream initialises every locale facet, which keeps
  // ~0.4 MB of code resident in `s3lect run` when libstdc++ is linked statically.
  problem.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return std::nullopt;
    problem = "cannot read " + path + ": " + std::strerror(error);
    return std::nullopt;
  }
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      problem = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    content.append(buffer, static_cast<std::size_t>(got));
    if (content.size() > max_bytes) {
      problem = path + " is larger than " + std::to_string(max_bytes) + " bytes";
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return content;
}

std::string_view trim_space(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool is_header_safe(std::string_view value) {
  for (unsigned char c : value) {
    if (c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

std::string masked_key_id(std::string_view access_key_id) {
  if (access_key_id.size() <= 4) return "****";
  return "****" + std::string(access_key_id.substr(access_key_id.size() - 4));
}

std::string credentials_problem(const aws_credentials& credentials,
                                std::chrono::system_clock::time_point now) {
  if (credentials.access_key_id.empty()) return "the access key id is empty";
  if (credentials.secret_access_key.empty()) return "the secret access key is empty";
  // These travel in headers and in the SigV4 scope: a newline would split the request.
  if (!is_header_safe(credentials.access_key_id) ||
      credentials.access_key_id.find('/') != std::string::npos) {
    return "the access key id contains '/', spaces or control characters";
  }
  if (!is_header_safe(credentials.secret_access_key)) {
    return "the secret access key contains spaces or control characters";
  }
  if (!is_header_safe(credentials.session_token)) {
    return "the session token contains spaces or control characters";
  }
  if (credentials.expiration && *credentials.expiration <= now) {
    return "the credentials expired already";
  }
  return {};
}

void post_completion(asio::any_completion_handler<credentials_signature> handler,
                     const asio::any_io_executor& fallback, error_code ec,
                     credentials_result result) {
  // Queued on `fallback`, then dispatched to the handler's associated executor.
  asio::post(fallback, asio::append(std::move(handler), ec, std::move(result)));
}

void coroutine_provider::fetch_impl(asio::any_completion_handler<credentials_signature> handler) {
  auto target = std::make_shared<deliver_outcome::box>(std::move(handler));
  auto self = shared_from_this();
  asio::co_spawn(asio::make_strand(executor_), run_fetch(self),
                 deliver_outcome{std::move(target), executor_, name()});
}

}  // namespace detail
}  // namespace s3lect
