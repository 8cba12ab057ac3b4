// Coordinated leadership under `s3lect run`, zero-configuration peer mode with watches, against
// the local Ceph RADOS Gateway: a node of higher priority that joins a running group takes over
// once it has settled, and the old leader's command has ended before the new one starts; on
// SIGTERM the leader hands over to the best remaining node; with --no-preempt nothing moves.
#include "support/cli_harness.hpp"
#include "support/cli_journal.hpp"

#include <csignal>
#include <map>
#include <string>
#include <vector>

namespace s3lect {
namespace {

using test::cli_process;
using test::eventually;
using test::journal_entry;
using test::latest_start;
using test::read_journal;
using namespace std::chrono_literals;

class CliCoordination : public test::CliIntegration {
 protected:
  /// `run` with short timings (L = 2 s, so the settle time is 2 s), zero-configuration peer mode
  /// with watches, `--priority`, and a journaling command.
  cli_process& start_node(const std::string& id, int priority,
                          const std::vector<std::string>& extra = {}) {
    const unsigned short port = test::free_port();
    auto args = run_args(id);
    args.insert(args.end(),
                {"--peer", "--peer-watch", "--peer-listen", "127.0.0.1:" + std::to_string(port),
                 "--priority", std::to_string(priority)});
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sh", "-c", test::journaling_command(journal())});
    cli_process& node = start(args);
    nodes_[id] = &node;
    return node;
  }

  std::string journal() const { return scratch + "/journal"; }

  /// Waits up to `limit` for `id`'s command to be the latest started.
  bool leads(const std::string& id, std::chrono::seconds limit) {
    return eventually(
        [&] {
          const auto latest = latest_start(journal());
          return latest && latest->id == id;
        },
        limit);
  }

  /// Every command ended before the next one started.
  void expect_one_command_at_a_time() {
    std::map<std::string, int> running;
    int at_once = 0;
    for (const journal_entry& e : read_journal(journal())) {
      if (e.kind == "start") {
        ++running[e.id];
        at_once = 0;
        for (const auto& [id, n] : running) at_once += n;
        EXPECT_LE(at_once, 1) << "two commands at once when " << e.id << " started term " << e.term;
      } else if (e.kind == "end") {
        --running[e.id];
      }
    }
  }

  void stop_all() {
    for (auto& [id, node] : nodes_) ::kill(node->pid, SIGTERM);
    for (auto& [id, node] : nodes_) EXPECT_TRUE(node->wait(10s)) << id;
  }

  std::string logs() const {
    std::string text;
    for (const auto& [id, node] : nodes_) text += "--- " + id + "\n" + node->err();
    return text;
  }

  std::map<std::string, cli_process*> nodes_;
};

TEST_F(CliCoordination, AHigherPriorityNodeTakesOverOnceSettledAfterTheOldCommandEnded) {
  start_node("low", 1);
  ASSERT_TRUE(leads("low", 15s)) << logs();
  start_node("mid", 2);
  start_node("high", 3);
  // Watching from its first check (about 2F), settled a lease later, then one handover.
  ASSERT_TRUE(leads("high", 10s)) << logs();
  EXPECT_NE(nodes_["low"]->err().find("handing over to a higher-priority candidate"),
            std::string::npos)
      << logs();
  // SIGTERM: the best remaining node, the priority-2 one, is named and takes over.
  ::kill(nodes_["high"]->pid, SIGTERM);
  ASSERT_TRUE(nodes_["high"]->wait(10s));
  ASSERT_TRUE(leads("mid", 10s)) << logs();
  stop_all();
  expect_one_command_at_a_time();
}

TEST_F(CliCoordination, NoPreemptKeepsTheLeaderWhateverThePriorities) {
  start_node("low", 1, {"--no-preempt"});
  ASSERT_TRUE(leads("low", 15s)) << logs();
  start_node("high", 3);
  // Three settle times after the newcomer could have settled: still the first leader.
  EXPECT_FALSE(leads("high", 8s)) << logs();
  stop_all();
  expect_one_command_at_a_time();
}

}  // namespace
}  // namespace s3lect
