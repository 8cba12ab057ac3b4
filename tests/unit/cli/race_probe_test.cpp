// The race probe of `s3lect check` on the in-memory store: an atomic store gives one winner per
// race whatever its losers are answered (412, Ceph's 500, 409, a 500 after the write committed);
// stores whose conditions are not atomic with the write, are ignored, or refuse a write they
// then make, are found unsafe. The broken stores below pass a sequential probe except the one
// that ignores conditions: only racing writers show them.
#include "cli/race_probe.hpp"
#include "cli/run_to_completion.hpp"

#include <s3lect/error.hpp>
#include <s3lect/memory_storage.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using s3lect::put_condition;
using s3lect::put_result;
using s3lect::cli::race_findings;

/// How a broken store handles a conditional PUT.
enum class broken_kind {
  check_then_write,   ///< Checks the condition, then writes in a later step: racers all pass.
  ignore_conditions,  ///< Writes whatever the condition (s3rver).
  refuse_yet_write,   ///< Checks atomically and answers 412, but writes the refused body too.
};

/// A store with S3's answers whose conditional PUT is broken as `kind` says.
class broken_storage final : public s3lect::storage {
 public:
  broken_storage(executor_type executor, std::shared_ptr<s3lect::memory_store> store,
                 broken_kind kind)
      : executor_(std::move(executor)), store_(std::move(store)), kind_(kind) {}

  executor_type get_executor() const override { return executor_; }

 protected:
  void get_impl(std::string key,
                asio::any_completion_handler<s3lect::get_signature> handler) override {
    s3lect::get_result result;
    result.found = store_->get(key);
    asio::post(executor_, [handler = std::move(handler), result = std::move(result)]() mutable {
      std::move(handler)(error_code{}, std::move(result));
    });
  }

  void put_impl(std::string key, std::string body, put_condition condition,
                asio::any_completion_handler<s3lect::put_signature> handler) override {
    const auto current = store_->peek(key);
    const bool holds = condition.type == put_condition::kind::if_absent
                           ? !current
                           : current && current->etag == condition.etag;
    if (kind_ == broken_kind::check_then_write && holds) {
      // The write lands in a later step, after every racer has been checked.
      asio::post(executor_, [this, key = std::move(key), body = std::move(body),
                             handler = std::move(handler)]() mutable {
        answer(std::move(handler), {}, store_->poke(std::move(key), std::move(body)));
      });
      return;
    }
    if (kind_ == broken_kind::check_then_write) return answer(std::move(handler), refusal(), {});
    const std::string etag = store_->poke(std::move(key), std::move(body));
    if (kind_ == broken_kind::refuse_yet_write && !holds) {
      return answer(std::move(handler), refusal(), {});
    }
    answer(std::move(handler), {}, etag);
  }

 private:
  static error_code refusal() { return s3lect::errc::precondition_failed; }

  void answer(asio::any_completion_handler<s3lect::put_signature> handler, error_code ec,
              std::string etag) {
    put_result result;
    result.etag = std::move(etag);
    result.info.http_status = ec ? 412 : 200;
    asio::post(executor_, [handler = std::move(handler), ec, result = std::move(result)]() mutable {
      std::move(handler)(ec, std::move(result));
    });
  }

  executor_type executor_;
  std::shared_ptr<s3lect::memory_store> store_;
  broken_kind kind_;
};

class RaceProbe : public ::testing::Test {
 protected:
  static constexpr int writer_count = 16;

  /// Writers and reader are views of one atomic in-memory store.
  void use_memory_store(const s3lect::memory_faults& loser_faults = {},
                        const s3lect::memory_faults& first_writer_faults = {}) {
    for (int i = 0; i < writer_count; ++i) {
      auto view = std::make_unique<s3lect::memory_storage>(io.get_executor(), store);
      view->set_faults(i == 0 ? first_writer_faults : loser_faults);
      writers.push_back(std::move(view));
    }
  }

  void use_broken_store(broken_kind kind) {
    for (int i = 0; i < writer_count; ++i) {
      writers.push_back(std::make_unique<broken_storage>(io.get_executor(), store, kind));
    }
  }

  race_findings race(int rounds) {
    std::vector<s3lect::storage*> views;
    for (auto& writer : writers) views.push_back(writer.get());
    io.restart();  // run_to_completion stops it
    return s3lect::cli::run_to_completion(
        io, s3lect::cli::run_races(views, reader, "lock.json.s3lect-check-x-race", rounds));
  }

  asio::io_context io;
  std::shared_ptr<s3lect::memory_store> store = std::make_shared<s3lect::memory_store>();
  s3lect::memory_storage reader{io.get_executor(), store};
  std::vector<std::unique_ptr<s3lect::storage>> writers;
};

TEST_F(RaceProbe, AnAtomicStoreHasOneWinnerInEveryRace) {
  use_memory_store();
  const auto findings = race(3);
  EXPECT_TRUE(findings.unsafe_reason.empty()) << findings.unsafe_reason;
  EXPECT_TRUE(findings.store_error.empty()) << findings.store_error;
  ASSERT_EQ(findings.rounds.size(), 3u);
  for (const auto& round : findings.rounds) {
    EXPECT_EQ(round.create.winners, 1);
    EXPECT_EQ(round.create.refused, writer_count - 1);
    EXPECT_EQ(round.replace.winners, 1);
    EXPECT_EQ(round.replace.refused, writer_count - 1);
  }
  EXPECT_EQ(findings.other_answers, (std::map<std::string, int>{{"412", 3 * 2 * 15}}));
  EXPECT_EQ(findings.keys.size(), 3u);
  // Each round's key holds the If-Match race's winner.
  EXPECT_TRUE(store->peek("lock.json.s3lect-check-x-race-3"));
  const auto lines = s3lect::cli::describe_races(findings, writer_count);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "  info  race winners per round (create-if-absent/If-Match): 1/1 x3");
  EXPECT_EQ(lines[1], "  info  race answers other than success: 412 x90");
  EXPECT_EQ(lines[2],
            "  ok    races: 16 writers, 3 rounds of create-if-absent then If-Match: one winner "
            "in every race");
}

TEST_F(RaceProbe, LosersAnsweredWith500Or409AreSettledByTheReRead) {
  s3lect::memory_faults ceph;
  ceph.race_losers_get_500 = true;
  use_memory_store(ceph, ceph);
  auto findings = race(2);
  EXPECT_TRUE(findings.unsafe_reason.empty()) << findings.unsafe_reason;
  EXPECT_EQ(findings.other_answers, (std::map<std::string, int>{{"500", 2 * 2 * 15}}));
  for (const auto& round : findings.rounds) {
    EXPECT_EQ(round.create.winners, 1);
    EXPECT_EQ(round.create.unresolved, writer_count - 1);
  }

  for (const auto& key : findings.keys) store->erase(key);
  writers.clear();
  s3lect::memory_faults conflict;
  conflict.conflict_next = 1;  // each loser's first PUT: 409 ConditionalRequestConflict
  use_memory_store(conflict);
  findings = race(1);
  EXPECT_TRUE(findings.unsafe_reason.empty()) << findings.unsafe_reason;
  EXPECT_TRUE(findings.store_error.empty()) << findings.store_error;
  ASSERT_EQ(findings.rounds.size(), 1u);
  EXPECT_EQ(findings.rounds[0].create.winners, 1);
  EXPECT_EQ(findings.other_answers.at("409"), writer_count - 1);
}

TEST_F(RaceProbe, AWriteThatCommittedButAnswered500CountsAsTheWin) {
  s3lect::memory_faults committed_then_500;
  committed_then_500.commit_then_fail_next = 1;
  use_memory_store({}, committed_then_500);
  const auto findings = race(1);
  EXPECT_TRUE(findings.unsafe_reason.empty()) << findings.unsafe_reason;
  ASSERT_EQ(findings.rounds.size(), 1u);
  EXPECT_EQ(findings.rounds[0].create.winners, 1);
  EXPECT_EQ(findings.other_answers.at("500 (then found written)"), 1);
}

TEST_F(RaceProbe, AStoreThatChecksThenWritesInTwoStepsIsUnsafe) {
  use_broken_store(broken_kind::check_then_write);
  const auto findings = race(3);
  EXPECT_EQ(findings.unsafe_reason, "races: round 1 create-if-absent: 16 of 16 writers won");
  ASSERT_EQ(findings.rounds.size(), 1u);
  EXPECT_EQ(findings.rounds[0].create.winners, 16);
  const auto lines = s3lect::cli::describe_races(findings, writer_count);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(),
            "  FAIL  races: round 1 create-if-absent: 16 of 16 writers won: the store lets "
            "racing writers win");
}

TEST_F(RaceProbe, AStoreThatIgnoresConditionsIsUnsafe) {
  use_broken_store(broken_kind::ignore_conditions);
  const auto findings = race(1);
  EXPECT_EQ(findings.unsafe_reason, "races: round 1 create-if-absent: 16 of 16 writers won");
}

TEST_F(RaceProbe, AStoreThatRefusesAWriteYetMakesItIsUnsafe) {
  use_broken_store(broken_kind::refuse_yet_write);
  const auto findings = race(1);
  EXPECT_EQ(findings.unsafe_reason,
            "races: round 1 create-if-absent: a write refused with HTTP 412 took effect");
}

}  // namespace
