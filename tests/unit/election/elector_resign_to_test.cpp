// elector::async_resign_to end to end over the in-memory store on the manual clock: the
// released record names the successor, which takes over while the other followers hold off;
// a follower that asks gets errc::not_leader.
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/record.hpp>

#include "support/elector_group.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace s3lect::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

elector_config short_config(int index) {
  elector_config config;
  config.lock_key = "group/leader.json";
  config.server_id = "node-" + std::to_string(index);
  use_short_timing(config);
  return config;
}

asio::awaitable<void> resign_to(elector& e, std::string successor,
                                std::optional<boost::system::error_code>& result) {
  auto [ec] = co_await e.async_resign_to(std::move(successor), asio::as_tuple(asio::use_awaitable));
  result = ec;
}

TEST(ElectorResignTo, TheNamedFollowerTakesOverEveryRound) {
  elector_group g(3, short_config);
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  g.electors[1]->start();
  g.electors[2]->start();
  g.run_for(1s);
  // Each round names the follower that the previous one would not have chosen by itself.
  for (const int successor : {1, 2, 0, 1, 2, 0}) {
    const int leader = g.leader_index();
    ASSERT_GE(leader, 0);
    ASSERT_NE(leader, successor);
    const std::string name = "node-" + std::to_string(successor);
    std::optional<boost::system::error_code> result;
    asio::co_spawn(g.io, resign_to(*g.electors[leader], name, result), asio::detached);
    ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
    EXPECT_FALSE(*result) << result->message();
    ASSERT_TRUE(g.run_until([&] { return g.leader_index() >= 0; }));
    EXPECT_EQ(g.leader_index(), successor) << "named " << name;
    g.run_for(1s);
  }
}

TEST(ElectorResignTo, TheReleasedRecordNamesTheSuccessor) {
  elector_group g(1, short_config);
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  std::optional<boost::system::error_code> result;
  asio::co_spawn(g.io, resign_to(*g.electors[0], "node-7", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  const std::optional<lock_record> record = g.record();
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->released);
  EXPECT_EQ(record->successor, "node-7");
  EXPECT_EQ(record->handover, 300ms) << "2 F: node-7 holds no watch on us";
}

TEST(ElectorResignTo, AFollowerCannotResign) {
  elector_group g(2, short_config);
  g.electors[0]->start();
  ASSERT_TRUE(g.run_until([&] { return g.electors[0]->is_leader(); }));
  g.electors[1]->start();
  g.run_for(200ms);
  std::optional<boost::system::error_code> result;
  asio::co_spawn(g.io, resign_to(*g.electors[1], "node-0", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_EQ(*result, errc::not_leader);
  EXPECT_TRUE(g.electors[0]->is_leader());
}

}  // namespace
}  // namespace s3lect::test
