// Caching and refreshing credentials for the S3 client. The client signs with the cached
// credentials synchronously; a refresh starts in the background once they are within
// `refresh_ahead` of expiring, and a request waits for a fetch only when no usable credentials
// exist (the first request, after an idle period longer than `refresh_ahead`, or when every
// refresh failed until expiry).
//
// Refreshes are driven by use rather than by a timer that sleeps until expiry: a pending timer
// would keep io_context::run() from ever returning while a client exists, which breaks every
// run-to-completion program (the CLI's check, status and release). An elector uses its client
// every few seconds, far more often than the five-minute window, so its refreshes always happen
// ahead of time.
#pragma once

#include "credentials_detail.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

/// Timing rules of the cache.
struct refresh_settings {
  /// A background refresh starts this long before expiry.
  std::chrono::seconds refresh_ahead{300};
  /// Credentials this close to expiry are no longer used: a request signed now must still be
  /// valid when the store checks it.
  std::chrono::seconds expiry_margin{10};
  /// When a fetch returns credentials already inside the window (IMDS rotates them late), the
  /// next refresh waits this long (or half their remaining lifetime, if shorter) instead of
  /// polling the provider in a loop.
  std::chrono::milliseconds min_refresh_interval{15000};
  /// Backoff after a failed fetch: doubles from `retry_initial` up to `retry_max`. A request
  /// that finds no usable credentials may start a fetch `retry_initial` after the last failure.
  std::chrono::milliseconds retry_initial{1000};
  std::chrono::milliseconds retry_max{60000};
};

/// Sans-I/O: when credentials are usable and when to fetch. Times are wall-clock, the clock
/// expirations are stated in.
class refresh_schedule {
 public:
  using time_point = std::chrono::system_clock::time_point;

  explicit refresh_schedule(refresh_settings settings = {}) : settings_(settings) {}

  /// True when credentials were fetched and are more than expiry_margin from expiring.
  bool usable(time_point now) const;
  /// True when usable credentials should be refreshed in the background now.
  bool refresh_due(time_point now) const;
  /// True when a request that finds no usable credentials may start a fetch now; otherwise it
  /// fails at once with the last error instead of hammering a failing endpoint.
  bool may_fetch_now(time_point now) const;
  /// When the next background refresh becomes due (the later of the refresh point and the
  /// failure backoff); nullopt for long-term credentials or before the first fetch.
  std::optional<time_point> next_refresh() const;
  /// The backoff in force after the last failure; zero after a success.
  std::chrono::milliseconds backoff() const noexcept { return backoff_; }

  void on_success(time_point now, std::optional<time_point> expiration);
  void on_failure(time_point now);
  /// The store said the credentials expired: treat them as unusable from now on.
  void on_rejected();

 private:
  refresh_settings settings_;
  bool have_ = false;
  std::optional<time_point> expiration_;
  time_point refresh_at_{};
  std::optional<time_point> last_failure_;
  time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
};

/// Settings of a credentials_cache.
struct cache_settings {
  refresh_settings refresh;
  logger log;
  /// The wall clock; tests substitute a virtual one. Empty: the wall clock of the executor's
  /// clock_source (manual_clock.hpp), the system clock unless a test installed a manual clock.
  std::function<std::chrono::system_clock::time_point()> clock;
};

/// Caches one provider's credentials; thread-safe.
class credentials_cache : public std::enable_shared_from_this<credentials_cache> {
 public:
  credentials_cache(boost::asio::any_io_executor executor,
                    std::shared_ptr<credentials_provider> provider, cache_settings settings);

  /// Usable credentials, or nullopt. Never waits: when a refresh is due it starts one in the
  /// background and still returns the current credentials.
  std::optional<aws_credentials> current();

  /// Completes with usable credentials: the cached ones at once (through a post), else after a
  /// fetch, joining one already running. When the last fetch failed less than retry_initial
  /// ago, completes at once with that failure. Signature credentials_signature.
  /// Cancellation: none; a waiter completes with the fetch, bounded by the provider's timeouts.
  template <class CompletionToken>
  auto async_get(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, credentials_signature>(initiate_get{this},
                                                                               token);
  }

  /// The store rejected the credentials as expired (ExpiredToken): the next use fetches anew.
  void invalidate();

  /// The provider and key id of the credentials in use; empty before the first success.
  credentials_origin origin() const;

 private:
  using handler_type = boost::asio::any_completion_handler<credentials_signature>;

  struct initiate_get {
    credentials_cache* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->get_impl(handler_type(std::forward<Handler>(handler)));
    }
  };

  void get_impl(handler_type handler);
  /// Starts a fetch; called with `fetching_` just set, outside the lock.
  void launch_fetch();
  void on_fetched(boost::system::error_code ec, credentials_result result);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<credentials_provider> provider_;
  cache_settings settings_;

  mutable std::mutex mutex_;
  refresh_schedule schedule_;
  std::optional<aws_credentials> credentials_;
  bool fetching_ = false;
  boost::system::error_code last_error_;
  std::string last_message_;
  std::vector<handler_type> waiters_;  // only push_back and swap: never move-assigned
};

}  // namespace s3lect::inline v1::detail
