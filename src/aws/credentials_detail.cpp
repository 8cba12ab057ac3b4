// The plumbing every built-in credential provider shares (credentials_detail.hpp): fetch
// outcomes, the environment snapshot, small-file and header checks, and the coroutine base.
#include "credentials_detail.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <fcntl.h>
#include <unistd.h>

namespace s3lect::inline v1 {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

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

}  // namespace

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
}  // namespace s3lect::inline v1
