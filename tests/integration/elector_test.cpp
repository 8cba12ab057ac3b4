// Three electors against the local stores (the Ceph radosgw over HTTP and HTTPS, moto over HTTP,
// and Azurite through azure_blob_client),
// with short durations (lease 2 s) so the suite stays fast: one leader at a time, graceful
// handover, failover after a leader vanishes without releasing, and records written by the Go
// s3lect taken over correctly.
#include "support/local_azurite.hpp"
#include "support/local_s3.hpp"

#include "support/elector_group.hpp"
#include "support/go_timestamp.hpp"
#include "support/leadership_timeline.hpp"

#include <s3lect/azure_blob_client.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/record.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <ctime>
#include <functional>
#include <memory>
#include <thread>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using s3lect::elector;
using s3lect::elector_config;
using s3lect::s3_client;
using steady = std::chrono::steady_clock;

namespace {

elector_config short_config(std::string id, std::string key) {
  elector_config config;
  config.lock_key = std::move(key);
  config.server_id = std::move(id);
  config.lease = 2000ms;
  config.renew_deadline = 1200ms;
  config.frequent_interval = 400ms;
  config.infrequent_interval = 1200ms;
  config.request_timeout = 150ms;
  config.retry.delays = {10ms, 100ms};
  return config;
}

class ElectorOnLocalStore : public ::testing::TestWithParam<s3lect::test::store_transport> {
 protected:
  void SetUp() override {
    std::string problem;
    if (GetParam().store == s3lect::test::local_store::azurite) {
      auto azurite = s3lect::test::local_azurite::from_environment(problem);
      ASSERT_TRUE(azurite) << problem;
      auto config = azurite->config();
      config.request_timeout = 1s;
      client = std::make_unique<s3lect::azure_blob_client>(io.get_executor(), config);
    } else {
      auto s3 = s3lect::test::local_s3::from_environment(GetParam().store, problem);
      ASSERT_TRUE(s3) << problem;
      auto config = s3->config(GetParam().https);
      config.request_timeout = 1s;
      client = std::make_unique<s3_client>(io.get_executor(), config);
    }
    key = "integration/elector-" + s3lect::test::unique_suffix() + "/leader.json";
    // The first write to a fresh bucket pool takes seconds on radosgw: warm it up here, outside
    // the timed part of the tests.
    auto warm = s3lect::put_condition::absent();
    bool warmed = false;
    client->async_put(key + ".warmup", "{}", warm,
                      [&](boost::system::error_code, s3lect::put_result) { warmed = true; });
    run_until([&] { return warmed; }, 60s);
  }

  void add_electors(int count) {
    for (int i = 0; i < count; ++i) {
      electors.push_back(
          std::make_unique<elector>(io.get_executor(), *client,
                                    short_config("node-" + std::to_string(electors.size()), key)));
    }
  }

  void start(int index) {
    electors[index]->start();
    asio::co_spawn(io, s3lect::test::record_periods(*electors[index], index, periods),
                   asio::detached);
  }

  bool run_until(const std::function<bool()>& done, steady::duration limit = 20s) {
    const auto deadline = steady::now() + limit;
    io.restart();
    while (!done() && steady::now() < deadline) io.run_one_for(10ms);
    return done();
  }

  int leader_count() const { return s3lect::test::leader_count(electors); }
  int leader_index() const { return s3lect::test::leader_index(electors); }

  /// The record at the key, read through the real store.
  std::optional<s3lect::lock_record> read_record() {
    std::optional<s3lect::lock_record> record;
    bool done = false;
    client->async_get(key, [&](boost::system::error_code ec, s3lect::get_result result) {
      if (!ec && result.found) {
        record = s3lect::decode_record(result.found->body).record;
      }
      done = true;
    });
    run_until([&] { return done; });
    return record;
  }

  /// Writes `body` at the key as a foreign writer would (create-if-absent on a fresh key).
  void write_foreign(const std::string& body) {
    bool done = false;
    boost::system::error_code error;
    auto absent = s3lect::put_condition::absent();
    client->async_put(key, body, absent, [&](boost::system::error_code ec, s3lect::put_result) {
      error = ec;
      done = true;
    });
    ASSERT_TRUE(run_until([&] { return done; }));
    ASSERT_FALSE(error) << error.message();
  }

  asio::io_context io;
  std::unique_ptr<s3lect::storage> client;
  std::string key;
  std::vector<std::unique_ptr<elector>> electors;
  std::vector<s3lect::test::leadership_period> periods;
};

asio::awaitable<void> stop(elector& e, bool& done) {
  co_await e.async_stop();
  done = true;
}

}  // namespace

TEST_P(ElectorOnLocalStore, ThreeElectorsKeepExactlyOneLeader) {
  add_electors(3);
  for (int i = 0; i < 3; ++i) start(i);
  ASSERT_TRUE(run_until([&] { return leader_count() == 1 && periods.size() == 1; }));
  const int leader = leader_index();
  // Several leases: the leader keeps renewing; nobody else ever leads.
  run_until([] { return false; }, 5s);
  EXPECT_EQ(leader_count(), 1);
  EXPECT_EQ(leader_index(), leader);
  EXPECT_EQ(periods.size(), 1u);
  auto record = read_record();
  ASSERT_TRUE(record);
  EXPECT_EQ(record->leader_id, "node-" + std::to_string(leader));
  EXPECT_EQ(record->term, 1u);
  for (const auto& e : electors) EXPECT_EQ(e->leader_id(), record->leader_id);
}

TEST_P(ElectorOnLocalStore, GracefulStopHandsOverWithinAPollInterval) {
  add_electors(3);
  for (int i = 0; i < 3; ++i) start(i);
  ASSERT_TRUE(run_until([&] { return leader_count() == 1 && periods.size() == 1; }));
  const int old_leader = leader_index();
  bool stopped = false;
  const auto stop_time = steady::now();
  asio::co_spawn(io, stop(*electors[old_leader], stopped), asio::detached);
  ASSERT_TRUE(run_until([&] { return stopped; }));
  ASSERT_TRUE(run_until([&] { return leader_count() == 1 && periods.size() == 2; }));
  // Followers read every frequent interval, or every infrequent one once stable (1.2 s).
  EXPECT_LT(steady::now() - stop_time, 1200ms + 500ms);
  EXPECT_NE(leader_index(), old_leader);
  EXPECT_EQ(read_record()->term, 2u);
  s3lect::test::expect_safe(periods);
}

TEST_P(ElectorOnLocalStore, FailoverAfterALeaderVanishesWithoutReleasing) {
  add_electors(3);
  for (int i = 0; i < 3; ++i) start(i);
  ASSERT_TRUE(run_until([&] { return leader_count() == 1 && periods.size() == 1; }));
  const int old_leader = leader_index();
  const auto vanished = steady::now();
  electors[old_leader].reset();
  ASSERT_TRUE(run_until([&] { return leader_count() == 1 && periods.size() == 2; }));
  // Rule (b): the record must stay unchanged for a lease on the follower's clock; its last
  // renewal was at most one frequent interval before the leader vanished.
  EXPECT_GE(steady::now() - vanished, 2000ms - 400ms);
  EXPECT_LT(steady::now() - vanished, 2000ms + 1200ms + 500ms);
  EXPECT_EQ(read_record()->term, 2u);
  s3lect::test::expect_safe(periods);
}

TEST_P(ElectorOnLocalStore, TakesOverARecordTheStoreDatesOldAtOnce) {
  // A Go node wrote this record and died; its clock was an hour ahead, so by lastUpdated the
  // record looks fresh. The store's own Date and Last-Modified date it: once the store says it
  // is older than L + max_clock_skew + 2 s (2 + 0 + 2 s here), it is taken at the first read.
  write_foreign(R"({"leaderID":"go-node","leaderAddr":"10.0.1.42:8443","lastUpdated":")" +
                s3lect::test::rfc3339_seconds(std::chrono::system_clock::now() + 1h) + "\"}");
  // Real time must pass for a real store's clock (whole seconds, so one more for the phase).
  std::this_thread::sleep_for(5s);
  elector_config config = short_config("node-0", key);
  config.max_clock_skew = 0ms;
  electors.push_back(std::make_unique<elector>(io.get_executor(), *client, config));
  const auto started = steady::now();
  start(0);
  ASSERT_TRUE(run_until([&] { return electors[0]->is_leader(); }));
  EXPECT_LT(steady::now() - started, 1000ms);
  auto record = read_record();
  ASSERT_TRUE(record);
  EXPECT_EQ(record->leader_id, "node-0");
  EXPECT_EQ(record->term, 1u) << "a Go record counts as term 0";
}

TEST_P(ElectorOnLocalStore, WaitsALeaseForARecordJustWrittenWhateverItsTimestamp) {
  // The writer's clock was an hour behind: by lastUpdated the record looks an hour old, but the
  // store wrote it just now. Only rule (b) may take it, after a lease (the old wall-clock rule
  // took it at once: two leaders).
  write_foreign(R"({"leaderID":"go-node","leaderAddr":"10.0.1.42:8443","lastUpdated":")" +
                s3lect::test::rfc3339_seconds(std::chrono::system_clock::now() - 1h) + "\"}");
  add_electors(1);
  const auto started = steady::now();
  start(0);
  ASSERT_TRUE(run_until([&] { return electors[0]->is_leader(); }));
  EXPECT_GE(steady::now() - started, 2000ms);
  EXPECT_EQ(read_record()->leader_id, "node-0");
}

TEST_P(ElectorOnLocalStore, GoZeroTimeReleaseIsTakenOverAtOnce) {
  write_foreign(
      R"({"leaderID":"go-node","leaderAddr":"10.0.1.42:8443","lastUpdated":"0001-01-01T00:00:00Z"})");
  add_electors(1);
  const auto started = steady::now();
  start(0);
  ASSERT_TRUE(run_until([&] { return electors[0]->is_leader(); }));
  EXPECT_LT(steady::now() - started, 1000ms);
  EXPECT_EQ(read_record()->term, 1u);
}

INSTANTIATE_TEST_SUITE_P(Stores, ElectorOnLocalStore,
                         ::testing::ValuesIn(s3lect::test::every_storage_transport),
                         [](const auto& info) {
                           return s3lect::test::store_transport_name(info.param);
                         });
