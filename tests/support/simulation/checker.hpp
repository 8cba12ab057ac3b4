// The safety checks of the election simulation, on leadership periods in real (simulated) time,
// and the timeline a failure prints. Included by election_core_simulation_test.cpp only.
//
// A leadership period of a process runs from `start`, the real time its core emitted
// leadership_gained, to `end`, the last real time at which the process could act as leader:
// the earliest of
//   - the real time its core emitted leadership_lost;
//   - the real time its boot clock (instant.steady) reached its leadership deadline S + D, as
//     the core last reported it: elector::is_leader() and the health endpoint say "no" from
//     then on, even before the core runs again. This is what ends the leadership of a process
//     that was suspended (or stuck) past its deadline: it observes the loss only on waking;
//   - for a process that crashed, the moment it crashed, or began the suspend it crashed in.
// A period whose deadline has passed in real time is over even while its process has not yet
// noticed. In the negative control the boot clock stops during a suspend, so the deadline in
// real time moves past the wake-up, and the period with it.
//
// Checked when a period starts (term T, acquisition as the store saw it):
//   - T is greater than every term gained before (fencing tokens strictly increase);
//   - the store granted T to this very process (a successful conditional PUT of its own);
//   - every other period has ended (no two leaders at any instant);
//   - taken over by expiry (the PUT replaced a held record R of another process): T begins at
//     least L − D after the end of every earlier period since the last release written before
//     R, L and D of that period's config. The follower waits max(its own L, R's leaseMs) after
//     R was written, and R's writer demoted itself D after sending R, so the earlier leader's
//     own L − D holds (less 200 ppm of L + D: the nodes' clocks drift). With mixed configs
//     that is the stronger claim: it implies the smaller of the two configs' L − D. Leaders
//     before R's writer, back to the last release, lost their records to takeovers that each
//     waited their L after their last write. A release resets the chain: who acquires after
//     it waits for nobody;
//   - taken over after a release: T begins after the released record was written, and the
//     releasing process's leadership had ended by then.
// Elsewhere: a released record is written only by a process that no longer leads.
#pragma once

#include "support/simulation/store.hpp"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::test::simulation {

inline std::string in_ms(nanoseconds t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(t).count()) + "ms";
}

/// The last events before a failure: core log lines and the simulation's own notes, with the
/// real time in milliseconds. SIM_TRACE=1 prints every line as it happens.
class timeline {
 public:
  void add(nanoseconds now, const std::string& who, std::string_view what) {
    std::string line = in_ms(now);
    line.insert(0, line.size() < 9 ? 9 - line.size() : 0, ' ');
    line += ' ';
    line += who;
    line += ' ';
    line += what;
    if (trace_) std::printf("%s\n", line.c_str());
    lines_.push_back(std::move(line));
    if (lines_.size() > capacity) lines_.pop_front();
  }
  std::string text() const {
    std::string out;
    for (const std::string& line : lines_) out += line + "\n";
    return out;
  }

 private:
  static constexpr std::size_t capacity = 250;
  bool trace_ = std::getenv("SIM_TRACE") != nullptr;
  std::deque<std::string> lines_;
};

/// One leadership of one process.
struct leadership_period {
  process_id process;
  std::string who;
  std::uint64_t term = 0;
  acquisition_kind kind = acquisition_kind::absent;
  nanoseconds start{0};
  std::optional<nanoseconds> end;
  std::optional<steady_time> deadline;  ///< S + D on the process's boot clock, as last reported.
  std::chrono::milliseconds lease{0};   ///< L of the process's config.
  std::chrono::milliseconds renew_deadline{0};  ///< D of the process's config.
};

class leadership_checker {
 public:
  /// The first real time at which node `n`'s boot clock reads `t`; nullopt when that has not
  /// happened and cannot be known yet (a boot clock stopped by a suspend in progress).
  using real_time_of = std::function<std::optional<nanoseconds>(std::size_t n, steady_time t)>;

  leadership_checker(real_time_of clock, timeline& events)
      : clock_(std::move(clock)), events_(events) {}

  /// A process reported leadership of `term` at `now`; returns the period's index.
  std::size_t gained(nanoseconds now, process_id process, const std::string& who,
                     std::uint64_t term, const elector_config& config,
                     std::optional<steady_time> deadline, const acquisition* taken) {
    leadership_period period;
    period.process = process;
    period.who = who;
    period.term = term;
    period.start = now;
    period.deadline = deadline;
    period.lease = config.lease;
    period.renew_deadline = config.renew_deadline;
    if (term <= last_term_) {
      violation(now, who + " gained term " + std::to_string(term) + " after term " +
                         std::to_string(last_term_) + ": terms must strictly increase");
    }
    last_term_ = std::max(last_term_, term);
    if (!taken || !(taken->writer == process)) {
      violation(now, who + " gained term " + std::to_string(term) +
                         " that the store did not grant to this process");
    } else {
      period.kind = taken->kind;
      if (taken->kind == acquisition_kind::released && now <= taken->replaced_committed) {
        violation(now, who + " gained term " + std::to_string(term) +
                           " before the released record it replaced was written");
      }
    }
    for (const leadership_period& earlier : periods_) check_after(period, earlier, taken);
    const bool granted = taken && taken->writer == process;
    events_.add(now, who,
                std::string("CHECK leadership term=") + std::to_string(term) +
                    " acquired=" + (granted ? to_string(period.kind) : "?"));
    periods_.push_back(std::move(period));
    return periods_.size() - 1;
  }

  /// The process renewed: its deadline is now `deadline`.
  void renewed(std::size_t index, steady_time deadline) { periods_[index].deadline = deadline; }

  /// The period ended at `when` by the process's own account (a loss, a crash); the end is the
  /// earlier of that and its deadline in real time.
  void ended(std::size_t index, nanoseconds when) {
    leadership_period& period = periods_[index];
    if (period.end) return;
    nanoseconds end = when;
    if (const auto due = deadline_in_real_time(period)) end = std::min(end, *due);
    period.end = end;
    events_.add(when, period.who,
                "CHECK leadership term=" + std::to_string(period.term) + " ended at " + in_ms(end));
  }

  /// A released record of `process` was written at `now`.
  void released(nanoseconds now, process_id process) {
    releases_.push_back(now);
    for (const leadership_period& period : periods_) {
      if (period.process == process && !period.end) {
        violation(now, period.who + " wrote a released record while still leading term " +
                           std::to_string(period.term));
      }
    }
  }

  void violation(nanoseconds now, const std::string& what) {
    events_.add(now, "CHECK", "VIOLATION " + what);
    if (violations_.empty()) context_ = events_.text();
    violations_.push_back("t=" + in_ms(now) + " " + what);
  }

  const std::vector<std::string>& violations() const { return violations_; }
  /// The timeline up to the first violation.
  const std::string& context() const { return context_; }
  /// The least, over takeovers by expiry, of how much later than L − D they began.
  std::optional<nanoseconds> closest_margin() const { return closest_margin_; }

 private:
  std::optional<nanoseconds> deadline_in_real_time(const leadership_period& period) const {
    if (!period.deadline) return std::nullopt;
    return clock_(period.process.node, *period.deadline);
  }

  // Whether a leadership that ended at `end` ended after the last release written before the
  // record that `taken` replaced.
  bool ended_since_last_release(nanoseconds end, const acquisition& taken) const {
    for (auto it = releases_.rbegin(); it != releases_.rend(); ++it) {
      if (*it <= taken.replaced_committed) return end > *it;
    }
    return true;
  }

  void check_after(const leadership_period& next, const leadership_period& earlier,
                   const acquisition* taken) {
    const nanoseconds start = next.start;
    std::optional<nanoseconds> end = earlier.end;
    if (!end) {
      // Still open: over only if its deadline has passed in real time.
      const auto due = deadline_in_real_time(earlier);
      if (!due || *due > start) {
        violation(start, next.who + " gained term " + std::to_string(next.term) + " while " +
                             earlier.who + " still leads term " + std::to_string(earlier.term) +
                             (due ? " until " + in_ms(*due)
                                  : std::string(" (suspended: its boot clock stands still)")));
        return;
      }
      end = due;
    }
    if (start < *end) {
      violation(start, next.who + " gained term " + std::to_string(next.term) + " before " +
                           earlier.who + "'s term " + std::to_string(earlier.term) + " ended at " +
                           in_ms(*end));
      return;
    }
    if (!taken) return;
    if (next.kind == acquisition_kind::expired && ended_since_last_release(*end, *taken)) {
      // Clocks drift up to ±50 ppm: the taker's L and the leader's D, each measured on its own
      // clock, may differ from real time by 100 ppm of L + D together; allowed twice that.
      const nanoseconds slack = (earlier.lease + earlier.renew_deadline) / 5000;
      const nanoseconds gap = earlier.lease - earlier.renew_deadline;
      const nanoseconds margin = start - *end - gap;
      if (!closest_margin_ || margin < *closest_margin_) closest_margin_ = margin;
      if (start + slack < *end + gap) {
        violation(start, next.who + " took term " + std::to_string(next.term) + " by expiry " +
                             in_ms(start - *end) + " after " + earlier.who + "'s term " +
                             std::to_string(earlier.term) + " ended at " + in_ms(*end) +
                             "; L - D = " + in_ms(gap));
      }
    }
    if (next.kind == acquisition_kind::released && taken->replaced_writer &&
        *taken->replaced_writer == earlier.process && *end > taken->replaced_committed) {
      violation(start, earlier.who + "'s term " + std::to_string(earlier.term) + " ended at " +
                           in_ms(*end) + ", after its released record was written at " +
                           in_ms(taken->replaced_committed));
    }
  }

  real_time_of clock_;
  timeline& events_;
  std::vector<leadership_period> periods_;
  std::vector<nanoseconds> releases_;  // when each released record was written
  std::uint64_t last_term_ = 0;
  std::vector<std::string> violations_;
  std::string context_;
  std::optional<nanoseconds> closest_margin_;
};

}  // namespace s3lect::test::simulation
