// `s3lect release` on a group of three `s3lect run` nodes against the local Ceph RADOS Gateway:
// a forced release keeps its holder out, so leadership moves to another node in every round,
// and `--to ID` moves it to the node named. Every wait is bounded; only processes this test
// started are signalled.
#include "support/cli_harness.hpp"

#include <s3lect/record.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using test::cli_process;
using test::eventually;
using namespace std::chrono_literals;

constexpr int node_count = 3;

class CliRelease : public test::CliIntegration {
 protected:
  /// Starts node-0 .. node-2, each running a long sleep while it leads.
  void start_nodes() {
    for (int i = 0; i < node_count; ++i) {
      auto args = run_args(node_id(i));
      args.insert(args.end(), {"--", "sleep", "600"});
      nodes_.push_back(&start(args));
    }
  }

  static std::string node_id(int i) { return "node-" + std::to_string(i); }

  /// The lock record now; nullopt when there is none or it cannot be read.
  std::optional<lock_record> record() {
    boost::asio::io_context io;
    s3_client client(io.get_executor(), s3.config(false));
    auto [ec, result] = test::run_until_complete<get_result>(
        io, [&](auto handler) { client.async_get(key, std::move(handler)); });
    if (ec || !result.found) return std::nullopt;
    return decode_record(result.found->body).record;
  }

  /// Waits up to `limit` for a held record with a term above `after`.
  std::optional<lock_record> held_after(std::uint64_t after, std::chrono::seconds limit) {
    std::optional<lock_record> held;
    eventually(
        [&] {
          held = record();
          return held && !held->released && held->term > after;
        },
        limit);
    if (held && (held->released || held->term <= after)) held.reset();
    return held;
  }

  /// Waits for `held`'s holder to renew it (same term, a new nonce), then `phase` more: a
  /// release `phase` after a renewal reaches the holder F - phase later, at its next renewal,
  /// and the late phases are those in which a holder not kept out wins its own release back
  /// (it reads and re-acquires within milliseconds of that renewal's 412, while the followers
  /// read only every F / 2).
  void wait_for_phase(const lock_record& held, std::chrono::milliseconds phase) {
    EXPECT_TRUE(eventually(
        [&] {
          const std::optional<lock_record> now = record();
          return now && now->term == held.term && now->nonce != held.nonce;
        },
        5s))
        << "no renewal";
    std::this_thread::sleep_for(phase);
  }

  /// `s3lect release --if-term TERM [extra]` until it is not refused for a renewal that won the
  /// race between its read and its write (exit 8, nothing written); the last attempt.
  cli_process& release(std::uint64_t term, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"release"};
    for (auto& arg : store_args()) args.push_back(arg);
    args.insert(args.end(), {"--if-term", std::to_string(term)});
    args.insert(args.end(), extra.begin(), extra.end());
    for (int attempt = 1;; ++attempt) {
      cli_process& released = run(args);
      if (released.status != 8 || attempt == 5) return released;
    }
  }

  /// Releases `held` with the options `extra`, expecting exit 0 and `said` in its output;
  /// returns the next held record, nullopt when none came within 10 s.
  std::optional<lock_record> hand_over(const lock_record& held, std::vector<std::string> extra,
                                       const std::string& said) {
    cli_process& released = release(held.term, extra);
    EXPECT_EQ(released.status, std::optional<int>(0)) << released.err();
    EXPECT_NE(released.out().find(said), std::string::npos) << released.out();
    std::optional<lock_record> next = held_after(held.term, 10s);
    EXPECT_TRUE(next) << all_logs();
    return next;
  }

  void stop_nodes() {
    for (auto* node : nodes_) ::kill(node->pid, SIGTERM);
    for (auto* node : nodes_) {
      ASSERT_TRUE(node->wait(10s));
      EXPECT_EQ(node->status, std::optional<int>(0)) << node->err();
    }
  }

  std::string all_logs() const {
    std::string logs;
    for (auto* node : nodes_) logs += node->err();
    return logs;
  }

  std::vector<cli_process*> nodes_;
};

TEST_F(CliRelease, MovesLeadershipToAnotherNodeInEveryRoundAndWithToToTheNamedOne) {
  start_nodes();
  std::optional<lock_record> held = held_after(0, 15s);
  ASSERT_TRUE(held);
  constexpr int rounds_without_to = 8;
  for (int round = 0; round < 2 * rounds_without_to; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::string> extra;
    // 1333ms: 2/3 of the 2s lease.
    std::string said = "held by " + held->leader_id + ", kept out for 1333ms";
    std::string to;
    if (round >= rounds_without_to) {
      // Each round names a different node that does not lead.
      for (int i = round; to.empty() || to == held->leader_id; ++i) to = node_id(i % node_count);
      // S3 mode: the records list no candidates, so a name needs --force.
      extra = {"--to", to, "--force", "--keep-out", "1500ms"};
      said = "kept out for 1500ms; successor: " + to;
    }
    // Every phase of the renewal cycle (F = 400ms) in turn: 50, 150, 250, 350ms after one.
    wait_for_phase(*held, std::chrono::milliseconds{50 + 100 * (round % 4)});
    const std::optional<lock_record> next = hand_over(*held, extra, said);
    ASSERT_TRUE(next);
    EXPECT_NE(next->leader_id, held->leader_id)
        << "the holder took its own release back, term " << next->term;
    if (!to.empty()) {
      EXPECT_EQ(next->leader_id, to) << "term " << next->term;
    }
    EXPECT_EQ(next->term, held->term + 1);
    held = next;
  }
  stop_nodes();
}

TEST_F(CliRelease, ToTheHolderItselfIsRefusedAndWritesNothing) {
  start_nodes();
  const std::optional<lock_record> held = held_after(0, 15s);
  ASSERT_TRUE(held);
  cli_process& refused = release(held->term, {"--to", held->leader_id});
  test::expect_one_line_error(refused, 2, "names the holder itself");
  const std::optional<lock_record> after = record();
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->released);
  EXPECT_EQ(after->term, held->term);
  stop_nodes();
}

// A name that is no candidate of the record (a ghost; in S3 mode any name) is refused: a release
// naming it would leave the lock to nobody for the window (4.3 s measured). The leader's command
// runs on: its s3lect never hears of a release.
TEST_F(CliRelease, ToANameTheRecordDoesNotListIsRefusedAndTheLeaderRunsOn) {
  start_nodes();
  const std::optional<lock_record> held = held_after(0, 15s);
  ASSERT_TRUE(held);
  const std::string follower = node_id(held->leader_id == node_id(0) ? 1 : 0);
  for (const std::string& name : std::vector<std::string>{"ghost", follower}) {
    cli_process& refused = release(held->term, {"--to", name});
    test::expect_one_line_error(refused, 2, "is not among the record's candidates");
    EXPECT_NE(refused.err().find("nothing was written"), std::string::npos) << refused.err();
  }
  // A renewal later the same leadership holds: nothing released it in between.
  wait_for_phase(*held, 0ms);
  const std::optional<lock_record> after = record();
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->released);
  EXPECT_EQ(after->term, held->term);
  EXPECT_EQ(after->leader_id, held->leader_id);
  EXPECT_EQ(all_logs().find("stopping command"), std::string::npos) << all_logs();
  stop_nodes();
}

TEST_F(CliRelease, BadToOrKeepOutExitsTwoBeforeReading) {
  std::vector<std::string> args{"release"};
  for (auto& arg : store_args()) args.push_back(arg);
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = args;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  test::expect_one_line_error(run(with({"--keep-out", "0"})), 2,
                              "--keep-out: must be greater than 0");
  test::expect_one_line_error(run(with({"--keep-out", "25h"})), 2, "--keep-out: must be at most");
  test::expect_one_line_error(run(with({"--to", "\xff"})), 2, "--to: expected a node's id");
  test::expect_one_line_error(run(with({"--to", ""})), 2, "--to");
  test::expect_one_line_error(run(with({"--force"})), 2, "--force: only with --to");
}

}  // namespace
}  // namespace s3lect
