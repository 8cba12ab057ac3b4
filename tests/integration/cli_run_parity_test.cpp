// `s3lect run` as consul-lock users expect it, against the local Ceph RADOS Gateway: --lease
// alone elects with the timings it derives, --timeout gives up with exit 11 while another node
// leads, and --slots N runs up to N commands, one per slot, each slot handed over on its own.
#include "support/cli_harness.hpp"

#include <filesystem>
#include <sstream>

namespace s3lect {
namespace {

using test::CliIntegration;
using test::eventually;
using test::read_file;
using namespace std::chrono_literals;

class CliRunParity : public CliIntegration {
 protected:
  /// `run` of this test's key with only --lease and --id.
  std::vector<std::string> lease_only_args(const std::string& lease, const std::string& id) {
    std::vector<std::string> args{"run"};
    for (auto& arg : store_args()) args.push_back(arg);
    args.insert(args.end(), {"--lease", lease, "--id", id});
    return args;
  }
};

TEST_F(CliRunParity, LeaseAloneElectsWithTheTimingsItDerives) {
  const std::string base_key = key;
  for (const std::string lease : {"2s", "6s", "2m"}) {
    SCOPED_TRACE(lease);
    key = base_key + "-" + lease;
    const std::string marker = scratch + "/term-" + lease;
    auto args = lease_only_args(lease, "lease-" + lease);
    args.insert(args.end(), {"--", "sh", "-c", "echo $S3LECT_TERM > " + marker + "; exit 5"});
    auto& process = run(args);
    EXPECT_EQ(process.status, std::optional<int>(5)) << process.err();
    long long term = 0;
    EXPECT_TRUE(std::istringstream(read_file(marker)) >> term) << process.err();
    EXPECT_EQ(term, 1);
  }
}

TEST_F(CliRunParity, TimeoutGivesUpWithElevenWhileAnotherLeads) {
  const std::string leader_marker = scratch + "/leader";
  auto leader_args = run_args("leader");
  leader_args.insert(leader_args.end(),
                     {"--", "sh", "-c", "echo up > " + leader_marker + "; exec sleep 60"});
  auto& leader = start(leader_args);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(leader_marker); }, 15s))
      << leader.err();

  const std::string never_marker = scratch + "/never";
  auto waiter_args = run_args("waiter");
  waiter_args.insert(waiter_args.end(),
                     {"--timeout", "1500ms", "--", "sh", "-c", "echo ran > " + never_marker});
  const auto started = std::chrono::steady_clock::now();
  auto& waiter = run(waiter_args);
  EXPECT_EQ(waiter.status, std::optional<int>(11)) << waiter.err();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1500ms);
  EXPECT_FALSE(std::filesystem::exists(never_marker));
  EXPECT_NE(waiter.err().find("msg=\"not elected in time: giving up\""), std::string::npos)
      << waiter.err();
  EXPECT_TRUE(std::filesystem::exists(leader_marker)) << "the leader is undisturbed";
  EXPECT_FALSE(leader.wait(0s)) << leader.err();
}

TEST_F(CliRunParity, TimeoutBoundsOnlyTheWaitForTheFirstLeadership) {
  auto args = run_args("quick");
  args.insert(args.end(), {"--timeout", "5s", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(run(args).status, std::optional<int>(3));
}

/// Slot and lock of a --slots command, as it wrote them: "SLOT LOCK".
std::pair<std::string, std::string> slot_of(const std::string& marker) {
  std::string slot, lock_url;
  std::istringstream(read_file(marker)) >> slot >> lock_url;
  return {slot, lock_url};
}

TEST_F(CliRunParity, SlotsRunOneCommandPerSlotAndHandEachSlotOver) {
  std::vector<test::cli_process*> nodes;
  std::vector<std::string> markers;
  for (int node = 0; node < 3; ++node) {
    markers.push_back(scratch + "/slot-" + std::to_string(node));
    auto args = run_args("node-" + std::to_string(node));
    args.insert(args.end(),
                {"--slots", "2", "--", "sh", "-c",
                 "echo \"$S3LECT_SLOT $S3LECT_LOCK\" > " + markers.back() + "; exec sleep 60"});
    nodes.push_back(&start(args));
  }
  const auto running = [&] {
    std::vector<int> started;
    for (int node = 0; node < 3; ++node) {
      if (!slot_of(markers[node]).second.empty()) started.push_back(node);
    }
    return started;
  };
  ASSERT_TRUE(eventually([&] { return running().size() >= 2; }, 15s));
  const std::vector<int> leaders = running();
  ASSERT_EQ(leaders.size(), 2u) << "two slots, three nodes: one waits";
  const auto first = slot_of(markers[leaders[0]]);
  const auto second = slot_of(markers[leaders[1]]);
  EXPECT_NE(first.first, second.first) << "one node per slot";
  for (const auto& [slot, lock_url] : {first, second}) {
    EXPECT_TRUE(slot == "0" || slot == "1") << slot;
    EXPECT_EQ(lock_url, lock() + ".slot-" + slot);
  }

  // The leader of one slot stops (releasing it): the waiting node takes that slot over.
  ::kill(nodes[leaders[0]]->pid, SIGTERM);
  ASSERT_TRUE(nodes[leaders[0]]->wait(10s));
  EXPECT_EQ(nodes[leaders[0]]->status, std::optional<int>(0));
  const int waiting = 3 - leaders[0] - leaders[1];
  ASSERT_TRUE(eventually([&] { return !slot_of(markers[waiting]).second.empty(); }, 10s))
      << nodes[waiting]->err();
  EXPECT_EQ(slot_of(markers[waiting]).first, first.first);
  EXPECT_EQ(slot_of(markers[leaders[1]]), second) << "the other slot is undisturbed";
  for (int node : {leaders[1], waiting}) {
    ::kill(nodes[node]->pid, SIGTERM);
    ASSERT_TRUE(nodes[node]->wait(10s));
    EXPECT_EQ(nodes[node]->status, std::optional<int>(0)) << nodes[node]->err();
  }
}

}  // namespace
}  // namespace s3lect
