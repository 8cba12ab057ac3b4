// Coordinated leadership in the election simulation (scenario::coordinated): every node has a
// priority, a leader's watching followers are its verified candidates, and releases name a
// successor. This ledger follows the named releases from their commit to their takeover: how
// often the successor won, and the check that nobody else took one over inside its window (each
// reader holds off min(handoverMs, its own lease) from its own first sight of the release, which
// comes after the commit). Included by world.hpp; the world feeds it from the store's commits.
#pragma once

#include "support/simulation/checker.hpp"
#include "support/simulation/store.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

namespace s3lect::test::simulation {

/// What a run with names did with them.
struct coordination_counts {
  std::uint64_t named_releases = 0;  ///< Released records naming a successor.
  std::uint64_t taken = 0;           ///< Of those, taken over by anyone.
  std::uint64_t successor_won = 0;   ///< Taken over by the node named.
  /// Named releases whose successor was alive, unpartitioned, awake and watching the releasing
  /// leader when the release landed; and those of them that it won.
  std::uint64_t ready = 0;
  std::uint64_t ready_won = 0;
  /// Leaderships ended by preemption (a higher-priority candidate had settled).
  std::uint64_t preemptions = 0;

  void add(const coordination_counts& other) {
    named_releases += other.named_releases;
    taken += other.taken;
    successor_won += other.successor_won;
    ready += other.ready;
    ready_won += other.ready_won;
    preemptions += other.preemptions;
  }
};

class coordination_ledger {
 public:
  /// A leader handed over to a higher-priority candidate.
  void preempted() { ++counts_.preemptions; }

  /// A released record committed at `now`; `ready`: its successor could take it at once.
  void released(nanoseconds now, const lock_record& record, bool ready) {
    if (record.successor.empty()) return;
    ++counts_.named_releases;
    if (ready) ++counts_.ready;
    releases_[now] = named{record.successor, record.handover, ready};
  }

  /// An acquisition of kind `released` committed at `now` by a node with id `winner` and lease
  /// `winner_lease`, replacing the record committed at `replaced_committed`.
  void acquired(nanoseconds now, nanoseconds replaced_committed, const std::string& winner,
                std::chrono::milliseconds winner_lease, leadership_checker& checker) {
    const auto release = releases_.find(replaced_committed);
    if (release == releases_.end()) return;
    const named& name = release->second;
    ++counts_.taken;
    if (winner == name.successor) {
      ++counts_.successor_won;
      if (name.ready) ++counts_.ready_won;
      return;
    }
    if (!name.handover) return;  // a reader's own window: s3lect always writes handoverMs
    // The reader's boot clock may run 50 ppm slow: well under a millisecond of any window.
    const nanoseconds window =
        std::min<nanoseconds>(*name.handover, winner_lease) - std::chrono::milliseconds{1};
    if (now - replaced_committed < window) {
      checker.violation(now, winner + " took over a release naming " + name.successor + " " +
                                 in_ms(now - replaced_committed) + " after it, inside its window " +
                                 in_ms(window));
    }
  }

  const coordination_counts& counts() const { return counts_; }

 private:
  struct named {
    std::string successor;
    std::optional<std::chrono::milliseconds> handover;
    bool ready = false;
  };
  std::map<nanoseconds, named> releases_;  // commit time -> what it names
  coordination_counts counts_;
};

}  // namespace s3lect::test::simulation
