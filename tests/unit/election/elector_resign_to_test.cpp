// elector::async_resign_to end to end over the in-memory store on the manual clock (S3 mode: a
// leader knows no candidates, so names go through unchecked_successor): the released record
// names the successor, which takes over while the other followers hold off; a follower that asks
// gets errc::not_leader; a checked name the leader does not know is refused, writing nothing.
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
  auto [ec] = co_await e.async_resign_to(unchecked_successor(std::move(successor)),
                                         asio::as_tuple(asio::use_awaitable));
  result = ec;
}

asio::awaitable<void> resign_to_checked(elector& e, std::string successor,
                                        std::optional<boost::system::error_code>& result) {
  auto [ec] = co_await e.async_resign_to(std::move(successor), asio::as_tuple(asio::use_awaitable));
  result = ec;
}

/// node-0 leads and node-1 has started following it.
bool lead_with_a_follower(elector_group& g) {
  g.electors[0]->start();
  if (!g.run_until([&] { return g.electors[0]->is_leader(); })) return false;
  g.electors[1]->start();
  g.run_for(200ms);
  return true;
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
  ASSERT_TRUE(lead_with_a_follower(g));
  std::optional<boost::system::error_code> result;
  asio::co_spawn(g.io, resign_to(*g.electors[1], "node-0", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_EQ(*result, errc::not_leader);
  EXPECT_TRUE(g.electors[0]->is_leader());
}

// A name checked against candidates an S3-mode leader does not have: refused, and the record
// is the leader's own still (`release --to ghost` cost 4.3 s of no leader before).
TEST(ElectorResignTo, ANameThatIsNoCandidateIsRefusedAndNothingIsWritten) {
  elector_group g(2, short_config);
  ASSERT_TRUE(lead_with_a_follower(g));
  const std::optional<lock_record> before = g.record();
  ASSERT_TRUE(before);
  std::optional<boost::system::error_code> result;
  asio::co_spawn(g.io, resign_to_checked(*g.electors[0], "node-1", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_EQ(*result, errc::unknown_successor) << result->message();
  EXPECT_TRUE(g.electors[0]->is_leader());
  const std::optional<lock_record> after = g.record();
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->released);
  EXPECT_EQ(after->term, before->term);
  EXPECT_EQ(after->leader_id, "node-0");
  // Our own id and the empty name mean "the best candidate": never refused.
  result.reset();
  asio::co_spawn(g.io, resign_to_checked(*g.electors[0], "node-0", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_FALSE(*result) << result->message();
}

// A follower asking with a name it does not know hears not_leader first, as with any name.
TEST(ElectorResignTo, AFollowersCheckedNameGetsNotLeader) {
  elector_group g(2, short_config);
  ASSERT_TRUE(lead_with_a_follower(g));
  std::optional<boost::system::error_code> result;
  asio::co_spawn(g.io, resign_to_checked(*g.electors[1], "ghost", result), asio::detached);
  ASSERT_TRUE(g.run_until([&] { return result.has_value(); }));
  EXPECT_EQ(*result, errc::not_leader);
}

}  // namespace
}  // namespace s3lect::test
