#include "credentials_cache.hpp"

#include "log_text.hpp"
#include "manual_clock.hpp"
#include "rfc3339.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;
using std::chrono::system_clock;

std::string describe_expiration(const std::optional<system_clock::time_point>& expiration) {
  return expiration ? format_rfc3339_ms(*expiration) : std::string("never");
}

}  // namespace

// --- refresh_schedule -----------------------------------------------------------------------

bool refresh_schedule::usable(time_point now) const {
  if (!have_) return false;
  return !expiration_ || now + settings_.expiry_margin < *expiration_;
}

bool refresh_schedule::refresh_due(time_point now) const {
  const auto next = next_refresh();
  return next && now >= *next;
}

bool refresh_schedule::may_fetch_now(time_point now) const {
  return !last_failure_ || now >= *last_failure_ + settings_.retry_initial;
}

std::optional<refresh_schedule::time_point> refresh_schedule::next_refresh() const {
  if (!have_ || !expiration_) return std::nullopt;
  return std::max(refresh_at_, retry_at_);
}

void refresh_schedule::on_success(time_point now, std::optional<time_point> expiration) {
  have_ = true;
  expiration_ = expiration;
  last_failure_.reset();
  backoff_ = milliseconds(0);
  retry_at_ = now;
  if (!expiration) return;
  // refresh_ahead before expiry. Credentials handed out already inside that window (IMDS
  // rotates late) are refreshed after min_refresh_interval, or half their remaining lifetime if
  // that is shorter, instead of at once and in a loop.
  refresh_at_ = *expiration - settings_.refresh_ahead;
  if (refresh_at_ <= now) {
    const auto remaining = *expiration - now;
    refresh_at_ =
        now + std::min<system_clock::duration>(settings_.min_refresh_interval, remaining / 2);
  }
}

void refresh_schedule::on_failure(time_point now) {
  last_failure_ = now;
  backoff_ =
      backoff_.count() == 0 ? settings_.retry_initial : std::min(backoff_ * 2, settings_.retry_max);
  retry_at_ = now + backoff_;
}

void refresh_schedule::on_rejected() {
  // Expired in the store's eyes: unusable now, and due for a fetch right away.
  if (!have_) return;
  expiration_ = time_point::min() + settings_.expiry_margin;
  refresh_at_ = time_point::min();
  retry_at_ = time_point::min();
}

// --- credentials_cache ----------------------------------------------------------------------

credentials_cache::credentials_cache(asio::any_io_executor executor,
                                     std::shared_ptr<credentials_provider> provider,
                                     cache_settings settings)
    : executor_(std::move(executor)),
      provider_(std::move(provider)),
      settings_(std::move(settings)),
      schedule_(settings_.refresh) {
  if (!settings_.clock) {
    settings_.clock = [clock = clock_source::of(executor_)] { return clock.wall_now(); };
  }
}

std::optional<aws_credentials> credentials_cache::current() {
  bool start = false;
  std::optional<aws_credentials> out;
  {
    std::lock_guard lock(mutex_);
    const auto now = settings_.clock();
    if (!credentials_ || !schedule_.usable(now)) return std::nullopt;
    out = credentials_;
    if (!fetching_ && schedule_.refresh_due(now)) start = fetching_ = true;
  }
  if (start) {
    settings_.log.log(log_level::debug, "credentials refresh started in the background provider=" +
                                            log_text::value(out->provider) +
                                            " expiration=" + describe_expiration(out->expiration));
    launch_fetch();
  }
  return out;
}

void credentials_cache::get_impl(handler_type handler) {
  bool start = false;
  {
    std::unique_lock lock(mutex_);
    const auto now = settings_.clock();
    if (credentials_ && schedule_.usable(now)) {
      credentials_result result;
      result.credentials = *credentials_;
      if (!fetching_ && schedule_.refresh_due(now)) start = fetching_ = true;
      lock.unlock();
      post_completion(std::move(handler), executor_, {}, std::move(result));
    } else if (fetching_) {
      waiters_.push_back(std::move(handler));
    } else if (schedule_.may_fetch_now(now)) {
      waiters_.push_back(std::move(handler));
      start = fetching_ = true;
    } else {
      credentials_result result;
      result.message = last_message_;
      const error_code ec = last_error_;
      lock.unlock();
      post_completion(std::move(handler), executor_, ec, std::move(result));
    }
  }
  if (start) launch_fetch();
}

void credentials_cache::launch_fetch() {
  // The handler keeps the cache alive until the provider answers.
  provider_->async_fetch([self = shared_from_this()](error_code ec, credentials_result result) {
    self->on_fetched(ec, std::move(result));
  });
}

void credentials_cache::on_fetched(error_code ec, credentials_result result) {
  std::vector<handler_type> waiters;
  std::string line;
  log_level level = log_level::debug;
  credentials_result delivered;
  {
    std::lock_guard lock(mutex_);
    const auto now = settings_.clock();
    fetching_ = false;
    const bool first = !credentials_;
    if (!ec) {
      // A provider's own result is checked here too: a custom provider may hand out anything.
      if (std::string problem = credentials_problem(result.credentials, now); !problem.empty()) {
        ec = credentials_errc::malformed;
        result.message = provider_->name() + ": " + problem;
      }
    }
    if (!ec) {
      if (result.credentials.provider.empty()) result.credentials.provider = provider_->name();
      schedule_.on_success(now, result.credentials.expiration);
      credentials_ = result.credentials;
      last_error_ = {};
      last_message_.clear();
      level = first ? log_level::info : log_level::debug;
      line = std::string(first ? "credentials obtained" : "credentials refreshed") +
             " provider=" + credentials_->provider +
             " access_key_id=" + masked_key_id(credentials_->access_key_id) +
             " expiration=" + describe_expiration(credentials_->expiration);
      delivered.credentials = *credentials_;
    } else {
      schedule_.on_failure(now);
      last_error_ = ec;
      last_message_ = result.message;
      if (credentials_ && schedule_.usable(now)) {
        level = log_level::warning;
        line =
            "credentials refresh failed; keeping the current ones until they expire "
            "provider=" +
            credentials_->provider +
            " expiration=" + describe_expiration(credentials_->expiration) +
            " retry_in_ms=" + std::to_string(schedule_.backoff().count()) + " error=\"" +
            result.message + "\"";
      } else {
        level = log_level::error;
        line =
            "credentials unavailable retry_in_ms=" + std::to_string(schedule_.backoff().count()) +
            " error=" + log_text::value(result.message);
      }
      delivered.message = result.message;
    }
    waiters.swap(waiters_);
  }
  settings_.log.log(level, line);
  for (auto& waiter : waiters) {
    post_completion(std::move(waiter), executor_, ec, delivered);
  }
}

void credentials_cache::invalidate() {
  std::lock_guard lock(mutex_);
  schedule_.on_rejected();
}

credentials_origin credentials_cache::origin() const {
  std::lock_guard lock(mutex_);
  credentials_origin origin;
  if (credentials_) {
    origin.provider = credentials_->provider;
    origin.access_key_id = credentials_->access_key_id;
    origin.expiration = credentials_->expiration;
  }
  return origin;
}

}  // namespace s3lect::inline v1::detail
