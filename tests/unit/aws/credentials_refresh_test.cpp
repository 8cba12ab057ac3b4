// Refresh timing on a virtual clock: the sans-I/O refresh_schedule, and the credentials_cache
// over a provider whose fetches the test completes by hand. Proves that signing never waits
// while usable credentials exist, that a refresh starts ahead of expiry in the background, that
// a failed refresh keeps the old credentials until they expire and is logged without secrets.
#include "credentials_cache.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <deque>
#include <string>
#include <vector>

namespace s3lect {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace std::chrono_literals;
using detail::refresh_schedule;
using detail::refresh_settings;
using time_point = std::chrono::system_clock::time_point;

const time_point t0 = time_point(std::chrono::seconds(1'900'000'000));

// --- refresh_schedule -------------------------------------------------------------------------

TEST(RefreshSchedule, NothingIsUsableBeforeTheFirstFetch) {
  refresh_schedule schedule;
  EXPECT_FALSE(schedule.usable(t0));
  EXPECT_FALSE(schedule.refresh_due(t0));
  EXPECT_TRUE(schedule.may_fetch_now(t0));
  EXPECT_EQ(schedule.next_refresh(), std::nullopt);
}

TEST(RefreshSchedule, LongTermCredentialsAreNeverRefreshed) {
  refresh_schedule schedule;
  schedule.on_success(t0, std::nullopt);
  EXPECT_TRUE(schedule.usable(t0 + 24h * 365));
  EXPECT_FALSE(schedule.refresh_due(t0 + 24h * 365));
  EXPECT_EQ(schedule.next_refresh(), std::nullopt);
}

TEST(RefreshSchedule, RefreshesFiveMinutesBeforeExpiry) {
  refresh_schedule schedule;
  const time_point expiration = t0 + 1h;
  schedule.on_success(t0, expiration);
  EXPECT_EQ(schedule.next_refresh(), expiration - 5min);
  EXPECT_FALSE(schedule.refresh_due(expiration - 5min - 1ms));
  EXPECT_TRUE(schedule.refresh_due(expiration - 5min));
  // Still usable through the window, until the margin before expiry.
  EXPECT_TRUE(schedule.usable(expiration - 10s - 1ms));
  EXPECT_FALSE(schedule.usable(expiration - 10s));
  EXPECT_FALSE(schedule.usable(expiration));
}

TEST(RefreshSchedule, CredentialsAlreadyInTheWindowAreNotPolledInALoop) {
  refresh_schedule schedule;
  // IMDS hands out the same credentials until shortly before they expire.
  schedule.on_success(t0, t0 + 4min);
  EXPECT_EQ(schedule.next_refresh(), t0 + 15s);
  // Credentials about to expire: half their remaining life.
  schedule.on_success(t0, t0 + 20s);
  EXPECT_EQ(schedule.next_refresh(), t0 + 10s);
}

TEST(RefreshSchedule, FailuresBackOffExponentiallyUpToTheCap) {
  refresh_settings settings;
  settings.retry_initial = 1s;
  settings.retry_max = 8s;
  refresh_schedule schedule(settings);
  const time_point expiration = t0 + 1h;
  schedule.on_success(t0, expiration);
  time_point now = expiration - 5min;
  ASSERT_TRUE(schedule.refresh_due(now));

  std::vector<long> backoffs;
  for (int i = 0; i < 6; ++i) {
    schedule.on_failure(now);
    backoffs.push_back(static_cast<long>(schedule.backoff().count()));
    EXPECT_FALSE(schedule.refresh_due(now + schedule.backoff() - 1ms));
    now += schedule.backoff();
    EXPECT_TRUE(schedule.refresh_due(now));
    EXPECT_TRUE(schedule.usable(now));  // the old credentials stay in use meanwhile
  }
  EXPECT_EQ(backoffs, (std::vector<long>{1000, 2000, 4000, 8000, 8000, 8000}));

  schedule.on_success(now, now + 1h);
  EXPECT_EQ(schedule.backoff().count(), 0);
  EXPECT_EQ(schedule.next_refresh(), now + 55min);
}

TEST(RefreshSchedule, BlockingFetchesAreRateLimitedAfterAFailure) {
  refresh_schedule schedule;
  schedule.on_failure(t0);
  EXPECT_FALSE(schedule.may_fetch_now(t0 + 999ms));
  EXPECT_TRUE(schedule.may_fetch_now(t0 + 1s));
}

TEST(RefreshSchedule, RejectedCredentialsAreUnusableAtOnce) {
  refresh_schedule schedule;
  schedule.on_success(t0, t0 + 1h);
  schedule.on_rejected();
  EXPECT_FALSE(schedule.usable(t0));
  EXPECT_TRUE(schedule.may_fetch_now(t0));
}

// --- credentials_cache ------------------------------------------------------------------------

/// A provider whose fetches stay pending until the test completes them.
class manual_provider final : public credentials_provider {
 public:
  explicit manual_provider(asio::any_io_executor executor) : executor_(std::move(executor)) {}

  std::string name() const override { return "manual"; }

  std::size_t fetches() const { return fetches_; }
  std::size_t pending() const { return pending_.size(); }

  /// Completes the oldest pending fetch.
  void complete(error_code ec, credentials_result result) {
    ASSERT_FALSE(pending_.empty());
    // Move-construct out of the queue: any_completion_handler must never be move-assigned.
    handler_type handler(std::move(pending_.front()));
    pending_.pop_front();
    asio::post(executor_, [handler = std::move(handler), ec, result = std::move(result)]() mutable {
      std::move(handler)(ec, std::move(result));
    });
  }

 protected:
  void fetch_impl(asio::any_completion_handler<credentials_signature> handler) override {
    ++fetches_;
    pending_.emplace_back(std::move(handler));
  }

 private:
  using handler_type = asio::any_completion_handler<credentials_signature>;
  asio::any_io_executor executor_;
  std::deque<handler_type> pending_;
  std::size_t fetches_ = 0;
};

credentials_result issued(std::string key_id, std::optional<time_point> expiration) {
  credentials_result result;
  result.credentials.access_key_id = std::move(key_id);
  result.credentials.secret_access_key = "cache-secret-never-logged";
  result.credentials.session_token = "tok";
  result.credentials.expiration = expiration;
  return result;
}

credentials_result failed(std::string message) {
  credentials_result result;
  result.message = std::move(message);
  return result;
}

class CredentialsCache : public ::testing::Test {
 protected:
  CredentialsCache() : provider(std::make_shared<manual_provider>(io.get_executor())) {
    detail::cache_settings settings;
    settings.clock = [this] { return now; };
    settings.log.level = log_level::debug;
    settings.log.sink = [this](log_level level, std::string_view line) {
      logs.emplace_back(std::string(to_string(level)) + " " + std::string(line));
    };
    cache = std::make_shared<detail::credentials_cache>(io.get_executor(), provider, settings);
  }

  /// Starts an async_get; its outcome lands in `got` once the io_context runs.
  void get() {
    cache->async_get([this](error_code ec, credentials_result result) {
      got.emplace_back(ec, std::move(result));
    });
  }

  void run() {
    io.restart();
    io.poll();
  }

  bool logged(std::string_view text) const {
    for (const auto& line : logs) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  void expect_no_secret_logged() const {
    for (const auto& line : logs) {
      EXPECT_EQ(line.find("cache-secret-never-logged"), std::string::npos) << line;
    }
  }

  asio::io_context io;
  time_point now = t0;
  std::shared_ptr<manual_provider> provider;
  std::shared_ptr<detail::credentials_cache> cache;
  std::vector<std::pair<error_code, credentials_result>> got;
  std::vector<std::string> logs;
};

TEST_F(CredentialsCache, FirstUseWaitsForOneSharedFetch) {
  EXPECT_EQ(cache->current(), std::nullopt);
  get();
  get();
  get();
  run();
  EXPECT_EQ(provider->fetches(), 1u);  // three waiters, one fetch
  EXPECT_TRUE(got.empty());

  provider->complete({}, issued("AKID1", t0 + 1h));
  run();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& [ec, result] : got) {
    EXPECT_FALSE(ec);
    EXPECT_EQ(result.credentials.access_key_id, "AKID1");
    EXPECT_EQ(result.credentials.provider, "manual");
  }
  EXPECT_EQ(cache->origin().provider, "manual");
  EXPECT_EQ(cache->origin().access_key_id, "AKID1");
  EXPECT_TRUE(logged("info credentials obtained provider=manual access_key_id=****KID1"));
  expect_no_secret_logged();
}

TEST_F(CredentialsCache, SigningNeverWaitsAndRefreshStartsAheadOfExpiry) {
  get();
  provider->complete({}, issued("AKID1", t0 + 1h));
  run();

  // Until the window opens: the cached credentials, no fetch.
  now = t0 + 55min - 1s;
  ASSERT_TRUE(cache->current());
  EXPECT_EQ(provider->fetches(), 1u);

  // In the window: still the cached credentials at once, and one refresh in the background.
  now = t0 + 55min;
  auto during = cache->current();
  ASSERT_TRUE(during);
  EXPECT_EQ(during->access_key_id, "AKID1");
  EXPECT_EQ(provider->fetches(), 2u);
  ASSERT_TRUE(cache->current());  // no second refresh while one runs
  EXPECT_EQ(provider->fetches(), 2u);

  provider->complete({}, issued("AKID2", t0 + 2h));
  run();
  now = t0 + 56min;
  EXPECT_EQ(cache->current()->access_key_id, "AKID2");
  EXPECT_EQ(provider->fetches(), 2u);
  EXPECT_TRUE(logged("debug credentials refreshed provider=manual"));
}

TEST_F(CredentialsCache, AFailedRefreshKeepsTheOldCredentialsUntilTheyExpire) {
  get();
  provider->complete({}, issued("AKID1", t0 + 1h));
  run();

  now = t0 + 55min;
  ASSERT_TRUE(cache->current());
  provider->complete(credentials_errc::fetch_failed, failed("imds: no answer within 1000 ms"));
  run();
  EXPECT_TRUE(logged("warning credentials refresh failed; keeping the current ones"));
  EXPECT_TRUE(logged("error=\"imds: no answer within 1000 ms\""));

  // Backoff: no new attempt for a second, then one.
  now += 500ms;
  ASSERT_EQ(cache->current()->access_key_id, "AKID1");
  EXPECT_EQ(provider->fetches(), 2u);
  now += 500ms;
  ASSERT_EQ(cache->current()->access_key_id, "AKID1");
  EXPECT_EQ(provider->fetches(), 3u);
  provider->complete(credentials_errc::fetch_failed, failed("imds: still down"));
  run();

  // Expired (within the margin): requests now wait for a fetch, which fails them.
  now = t0 + 1h - 10s;
  EXPECT_EQ(cache->current(), std::nullopt);
  get();
  run();
  EXPECT_EQ(provider->fetches(), 4u);
  provider->complete(credentials_errc::fetch_failed, failed("imds: still down"));
  run();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, credentials_errc::fetch_failed);
  EXPECT_EQ(got[1].second.message, "imds: still down");
  EXPECT_TRUE(logged("error credentials unavailable"));
  expect_no_secret_logged();
}

TEST_F(CredentialsCache, AFreshFailureFailsWaitersAtOnceInsteadOfHammering) {
  get();
  provider->complete(credentials_errc::no_credentials, failed("no AWS credentials found (...)"));
  run();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, credentials_errc::no_credentials);

  now += 200ms;
  get();
  run();
  EXPECT_EQ(provider->fetches(), 1u);  // failed again at once from the last error
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, credentials_errc::no_credentials);
  EXPECT_EQ(got[1].second.message, "no AWS credentials found (...)");

  now += 1s;
  get();
  run();
  EXPECT_EQ(provider->fetches(), 2u);
  provider->complete({}, issued("AKID1", std::nullopt));
  run();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_FALSE(got[2].first);
}

TEST_F(CredentialsCache, RefusesCredentialsAProviderShouldNotHaveGiven) {
  get();
  credentials_result bad = issued("AKID1", t0 + 1h);
  bad.credentials.session_token = "split\r\nheader";
  provider->complete({}, std::move(bad));
  run();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, credentials_errc::malformed);
  EXPECT_EQ(got[0].second.message,
            "manual: the session token contains spaces or control characters");
}

TEST_F(CredentialsCache, InvalidateForcesAFetchOnNextUse) {
  get();
  provider->complete({}, issued("AKID1", t0 + 1h));
  run();
  ASSERT_TRUE(cache->current());
  cache->invalidate();
  EXPECT_EQ(cache->current(), std::nullopt);
  get();
  run();
  EXPECT_EQ(provider->fetches(), 2u);
  provider->complete({}, issued("AKID2", t0 + 2h));
  run();
  EXPECT_EQ(cache->current()->access_key_id, "AKID2");
}

}  // namespace
}  // namespace s3lect
