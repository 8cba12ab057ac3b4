// Caching and refreshing Entra ID tokens for azure_blob_client, on the same timing rules as the
// AWS credentials (credentials_cache.hpp's refresh_schedule, reused as it is): a request takes
// the cached token synchronously; a refresh starts in the background once the token is within
// five minutes of expiry (for a short-lived token, after half its remaining lifetime, capped at
// 15 s), and a request waits for a fetch only when no usable token exists. Driven by use, not by
// a timer, for the reason credentials_cache.hpp gives.
#pragma once

#include <s3lect/azure_credentials.hpp>
#include <s3lect/logger.hpp>

#include "credentials_cache.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1::detail {

/// Caches one provider's token; thread-safe.
class token_cache : public std::enable_shared_from_this<token_cache> {
 public:
  /// `settings.clock` empty: the wall clock of the executor's clock_source (manual_clock.hpp).
  token_cache(boost::asio::any_io_executor executor, std::shared_ptr<azure_token_provider> provider,
              cache_settings settings);

  /// A usable token, or nullopt. Never waits: when a refresh is due it starts one in the
  /// background and still returns the current token.
  std::optional<azure_token> current();

  /// Completes with a usable token: the cached one at once (through a post), else after a fetch,
  /// joining one already running. When the last fetch failed less than retry_initial ago,
  /// completes at once with that failure. Signature azure_token_signature. Cancellation: none;
  /// a waiter completes with the fetch, bounded by the provider's timeouts.
  template <class CompletionToken>
  auto async_get(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, azure_token_signature>(initiate_get{this},
                                                                               token);
  }

  /// The store refused the token (401, 403 AuthenticationFailed): the next use fetches anew.
  void invalidate();

  /// The provider's name, for messages.
  std::string provider_name() const { return provider_->name(); }

 private:
  using handler_type = boost::asio::any_completion_handler<azure_token_signature>;

  struct initiate_get {
    token_cache* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->get_impl(handler_type(std::forward<Handler>(handler)));
    }
  };

  void get_impl(handler_type handler);
  /// Starts a fetch; called with `fetching_` just set, outside the lock.
  void launch_fetch();
  void on_fetched(boost::system::error_code ec, azure_token token);
  /// Records a fetch's outcome and returns the log line; called under the lock.
  std::string record_outcome(boost::system::error_code& ec, azure_token& token, log_level& level);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<azure_token_provider> provider_;
  cache_settings settings_;

  mutable std::mutex mutex_;
  refresh_schedule schedule_;
  std::optional<azure_token> token_;
  bool fetching_ = false;
  boost::system::error_code last_error_;
  std::string last_message_;
  std::vector<handler_type> waiters_;  // only push_back and swap: never move-assigned
};

}  // namespace s3lect::inline v1::detail
