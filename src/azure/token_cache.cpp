#include "token_cache.hpp"

#include "entra_token.hpp"
#include "log_text.hpp"
#include "manual_clock.hpp"
#include "rfc3339.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::system_clock;

std::string describe_expiry(const std::optional<system_clock::time_point>& expires) {
  return expires ? format_rfc3339_ms(*expires) : std::string("never");
}

/// Completes `handler` through a post, so that no handler runs inside the call that started it.
void post_token(asio::any_completion_handler<azure_token_signature> handler,
                const asio::any_io_executor& fallback, error_code ec, azure_token token) {
  asio::post(fallback, asio::append(std::move(handler), ec, std::move(token)));
}

}  // namespace

token_cache::token_cache(asio::any_io_executor executor,
                         std::shared_ptr<azure_token_provider> provider, cache_settings settings)
    : executor_(std::move(executor)),
      provider_(std::move(provider)),
      settings_(std::move(settings)),
      schedule_(settings_.refresh) {
  if (!settings_.clock) {
    settings_.clock = [clock = clock_source::of(executor_)] { return clock.wall_now(); };
  }
}

std::optional<azure_token> token_cache::current() {
  bool start = false;
  std::optional<azure_token> out;
  {
    std::lock_guard lock(mutex_);
    const auto now = settings_.clock();
    if (!token_ || !schedule_.usable(now)) return std::nullopt;
    out = token_;
    if (!fetching_ && schedule_.refresh_due(now)) start = fetching_ = true;
  }
  if (start) {
    settings_.log.log(log_level::debug, "token refresh started in the background provider=" +
                                            log_text::value(out->provider) +
                                            " expires=" + describe_expiry(out->expires));
    launch_fetch();
  }
  return out;
}

void token_cache::get_impl(handler_type handler) {
  bool start = false;
  {
    std::unique_lock lock(mutex_);
    const auto now = settings_.clock();
    if (token_ && schedule_.usable(now)) {
      azure_token token = *token_;
      if (!fetching_ && schedule_.refresh_due(now)) start = fetching_ = true;
      lock.unlock();
      post_token(std::move(handler), executor_, {}, std::move(token));
    } else if (fetching_) {
      waiters_.push_back(std::move(handler));
    } else if (schedule_.may_fetch_now(now)) {
      waiters_.push_back(std::move(handler));
      start = fetching_ = true;
    } else {
      azure_token failed;
      failed.message = last_message_;
      const error_code ec = last_error_;
      lock.unlock();
      post_token(std::move(handler), executor_, ec, std::move(failed));
    }
  }
  if (start) launch_fetch();
}

void token_cache::launch_fetch() {
  // The handler keeps the cache alive until the provider answers.
  provider_->async_fetch([self = shared_from_this()](error_code ec, azure_token token) {
    self->on_fetched(ec, std::move(token));
  });
}

std::string token_cache::record_outcome(error_code& ec, azure_token& token, log_level& level) {
  const auto now = settings_.clock();
  const bool first = !token_;
  // A custom provider may hand out anything: its token is checked here too.
  if (!ec) {
    if (std::string problem = token_problem(token, now); !problem.empty()) {
      ec = credentials_errc::malformed;
      token = azure_token{};
      token.message = provider_->name() + ": " + problem;
    }
  }
  if (!ec) {
    if (token.provider.empty()) token.provider = provider_->name();
    schedule_.on_success(now, token.expires);
    token_ = token;
    last_error_ = {};
    last_message_.clear();
    level = first ? log_level::info : log_level::debug;
    return std::string(first ? "token obtained" : "token refreshed") +
           " provider=" + log_text::value(token.provider) +
           " expires=" + describe_expiry(token.expires);
  }
  if (token.message.empty()) token.message = provider_->name() + ": " + ec.message();
  schedule_.on_failure(now);
  last_error_ = ec;
  last_message_ = token.message;
  const std::string retry = " retry_in_ms=" + std::to_string(schedule_.backoff().count());
  if (token_ && schedule_.usable(now)) {
    level = log_level::warning;
    return "token refresh failed; keeping the current one until it expires provider=" +
           log_text::value(token_->provider) + " expires=" + describe_expiry(token_->expires) +
           retry + " error=" + log_text::value(token.message);
  }
  level = log_level::error;
  return "token unavailable" + retry + " error=" + log_text::value(token.message);
}

void token_cache::on_fetched(error_code ec, azure_token token) {
  std::vector<handler_type> waiters;
  std::string line;
  log_level level = log_level::debug;
  azure_token delivered;
  {
    std::lock_guard lock(mutex_);
    fetching_ = false;
    line = record_outcome(ec, token, level);
    if (ec) {
      delivered.message = token.message;
    } else {
      delivered = *token_;
    }
    waiters.swap(waiters_);
  }
  settings_.log.log(level, line);
  for (auto& waiter : waiters) post_token(std::move(waiter), executor_, ec, delivered);
}

void token_cache::invalidate() {
  std::lock_guard lock(mutex_);
  schedule_.on_rejected();
}

}  // namespace s3lect::inline v1::detail
