// The elector and the store's clock: the offset it measures from the store's Date headers, the
// lastUpdated it stamps with store time, the warning when this node's clock is far off, and the
// step-down when the store refuses our signatures as too skewed.
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include "support/elector_group.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace s3lect::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct captured_log {
  std::mutex mutex;
  std::vector<std::pair<log_level, std::string>> lines;

  bool has(log_level level, const std::string& part) {
    std::lock_guard lock(mutex);
    for (const auto& [at, line] : lines) {
      if (at == level && line.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

elector_config clock_config(const std::shared_ptr<captured_log>& log) {
  elector_config config;
  config.lock_key = "clock/leader.json";
  config.server_id = "node";
  config.lease = 600ms;
  config.renew_deadline = 400ms;
  config.frequent_interval = 100ms;
  config.infrequent_interval = 300ms;
  config.request_timeout = 50ms;
  config.retry.delays = {5ms, 20ms};
  config.max_clock_skew = 1s;
  config.log.level = log_level::debug;
  config.log.sink = [log](log_level level, std::string_view line) {
    std::lock_guard lock(log->mutex);
    log->lines.emplace_back(level, std::string(line));
  };
  return config;
}

/// One elector on a memory store whose clock runs `store_ahead` of this machine's.
struct clocked_node : elector_group {
  explicit clocked_node(
      std::chrono::system_clock::duration store_ahead,
      const std::shared_ptr<captured_log>& captured = std::make_shared<captured_log>())
      : elector_group(1, [captured](int) { return clock_config(captured); }),
        log(captured),
        view(*views[0]),
        node(electors[0].get()) {
    store->set_clock_offset(store_ahead);
  }

  std::shared_ptr<captured_log> log;
  memory_storage& view;
  elector* node;
};

TEST(ElectorClock, MeasuresTheOffsetToTheStoresClockAndStampsStoreTime) {
  clocked_node n(std::chrono::minutes{5});  // the store is 5 minutes ahead of this node
  EXPECT_FALSE(n.node->status().clock_offset) << "nothing measured before the first answer";
  n.node->start();
  ASSERT_TRUE(n.run_until([&] { return n.node->counters().renewals >= 3; }));
  const auto offset = n.node->status().clock_offset;
  ASSERT_TRUE(offset);
  // A memory store answers within microseconds: the bound is the Date header's second at most.
  EXPECT_LE(offset->error_bound, 501ms);
  EXPECT_LE(std::chrono::abs(offset->offset - 300s), offset->error_bound);
  // lastUpdated is stamped with the store's time, so readers see true time.
  const auto found = n.store->peek("clock/leader.json");
  ASSERT_TRUE(found);
  const auto record = decode_record(found->body).record;
  ASSERT_TRUE(record);
  EXPECT_LT(std::chrono::abs(record->last_updated - (n.wall_now() + 5min)), 2s);
  EXPECT_TRUE(n.log->has(log_level::warning, "off the store's clock")) << "5 min > skew / 2";
}

TEST(ElectorClock, AClockWithinHalfTheSkewRaisesNoWarning) {
  clocked_node n(0s);
  n.node->start();
  ASSERT_TRUE(n.run_until([&] { return n.node->counters().renewals >= 3; }));
  ASSERT_TRUE(n.node->status().clock_offset);
  EXPECT_FALSE(n.log->has(log_level::warning, "off the store's clock"));
}

TEST(ElectorClock, ALeaderWhoseSignaturesTheStoreRefusesStepsDownAtOnce) {
  clocked_node n(0s);
  n.node->start();
  ASSERT_TRUE(n.run_until([&] { return n.node->is_leader(); }));
  // The system clock jumped past S3's 15-minute window: every request is refused.
  memory_faults faults;
  faults.fail_next = 1000;
  faults.fail_with = errc::clock_skewed;
  n.view.set_faults(faults);
  ASSERT_TRUE(n.run_until([&] { return !n.node->is_leader(); }));
  EXPECT_TRUE(n.run_until([&] { return n.node->counters().demotions == 1; }));
  EXPECT_TRUE(n.log->has(log_level::error, "RequestTimeTooSkewed"));
  EXPECT_TRUE(n.log->has(log_level::error, "offset="));
  // Stepped down on the refusal itself, not at the renew deadline that would follow.
  EXPECT_TRUE(n.log->has(log_level::warning, "reason=clock_refused"));
  EXPECT_FALSE(n.log->has(log_level::warning, "reason=renew_deadline"));
}

}  // namespace
}  // namespace s3lect::test
