// The jobs of the election simulation, as `s3lect run -- COMMAND` runs them: a leader's command,
// owned by a guardian process next to s3lect, and the checks on them in real (simulated) time.
// Included by support/simulation/world.hpp only.
//
// A job runs from the moment its s3lect process reports leadership until the first of:
//   - s3lect reports the loss: the job stops at once after a stop or a resignation (the CLI
//     stops the command before it writes the released record), within the kill grace G after
//     any other loss (SIGTERM, then SIGKILL at G);
//   - the guardian's deadline: T + G on the node's boot clock, T = S + D of the last successful
//     write s3lect reported ("leading until T"), however long s3lect itself is frozen;
//   - the s3lect process dies: the guardian kills the job at once (a machine crash kills it too).
// While the whole machine is suspended the job is frozen with it and does nothing; when the
// machine wakes, the guardian first kills it if its deadline passed meanwhile (counted as taking
// no time: the real window after a resume is what fencing covers), else the job goes on.
//
// Checked: no two jobs of different processes or terms are ever active at the same real instant,
// and each job's term is greater than that of every job started before it.
#pragma once

#include "support/simulation/checker.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::test::simulation {

/// What s3lect last told its guardian: "leading until T" (boot clock), with the term and the
/// nonce of its last successful write.
struct guardian_report {
  steady_time until;
  std::uint64_t term = 0;
  std::string nonce;
};

/// The job a guardian runs for its s3lect process: one process tree at a time.
struct running_job {
  std::size_t index = 0;  ///< The job checker's.
  std::uint64_t term = 0;
  steady_time kill_at;    ///< Boot clock: gone by then (T + G, or the loss plus its exit time).
  bool stopping = false;  ///< s3lect reported the loss: the job is exiting.
};

/// The guardian of one s3lect process (`s3lect run`).
struct guardian_state {
  std::chrono::milliseconds kill_grace{0};  ///< G, validated G < L − D.
  std::optional<guardian_report> report;    ///< Cleared when s3lect reports the loss.
  std::optional<running_job> job;
  std::optional<std::uint64_t> waiting_term;  ///< Starts once the previous tree is gone.
  std::uint64_t timer_generation = 0;
};

class job_checker {
 public:
  using report_violation = std::function<void(nanoseconds, const std::string&)>;

  job_checker(report_violation violation, timeline& events)
      : violation_(std::move(violation)), events_(events) {}

  /// The job of `process` for `term` starts at `now`; returns its index.
  std::size_t started(nanoseconds now, process_id process, const std::string& who,
                      std::uint64_t term) {
    if (term <= last_term_) {
      violation_(now, who + " started a job of term " + std::to_string(term) +
                          " after a job of term " + std::to_string(last_term_) +
                          ": job terms must strictly increase");
    }
    last_term_ = std::max(last_term_, term);
    jobs_.push_back(job{process, who, term});
    events_.add(now, who, "JOB started term=" + std::to_string(term));
    activate(jobs_.size() - 1, now);
    return jobs_.size() - 1;
  }

  /// The whole machine froze: the job does nothing until resumed().
  void paused(std::size_t index, nanoseconds now) {
    jobs_[index].active = false;
    events_.add(now, jobs_[index].who, "JOB frozen with its machine");
  }
  void resumed(std::size_t index, nanoseconds now) {
    events_.add(now, jobs_[index].who, "JOB resumed");
    activate(index, now);
  }

  /// The job is gone at `now` (or was already inactive: frozen, then killed on waking).
  void ended(std::size_t index, nanoseconds now, const std::string& how) {
    job& j = jobs_[index];
    j.active = false;
    events_.add(now, j.who, "JOB ended term=" + std::to_string(j.term) + " " + how);
  }

  std::size_t jobs() const { return jobs_.size(); }

 private:
  struct job {
    process_id process;
    std::string who;
    std::uint64_t term = 0;
    bool active = false;
  };

  void activate(std::size_t index, nanoseconds now) {
    job& j = jobs_[index];
    for (const job& other : jobs_) {
      if (&other == &j || !other.active) continue;
      if (other.process == j.process && other.term == j.term) continue;
      violation_(now, "jobs overlap: " + j.who + "'s job of term " + std::to_string(j.term) +
                          " runs while " + other.who + "'s job of term " +
                          std::to_string(other.term) + " still runs");
    }
    j.active = true;
  }

  report_violation violation_;
  timeline& events_;
  std::vector<job> jobs_;
  std::uint64_t last_term_ = 0;
};

}  // namespace s3lect::test::simulation
