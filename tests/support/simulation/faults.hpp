// The faults of the election simulation: the member functions of world that schedule and apply
// them (store outages, partitions, crashes of processes and machines, stops, resignations,
// suspends of machines, freezes of processes, steps of wall clocks). Included by
// election_core_simulation_test.cpp, after the world.
#pragma once

#include "support/simulation/world.hpp"

namespace s3lect::test::simulation {

// Faults hit the leader half the time: that is where they matter.
inline std::size_t world::target() {
  if (chance(0.5)) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].leader) return i;
    }
  }
  return rng_() % nodes_.size();
}

inline void world::schedule_chaos(nanoseconds until) {
  // The guardian attacks are two more kinds: the other scenarios keep their sequences.
  const unsigned kinds = scenario_.guardian_attacks ? 12 : 10;
  for (nanoseconds t = uniform(5s, 40s); t < until; t += uniform(5s, 60s)) {
    const unsigned what = rng_() % kinds;
    const nanoseconds length = uniform(1s, 25s);
    switch (what) {
      case 0:
      case 1:
        at(
            t,
            [this, what, length] {
              state_ = what == 0 ? store_state::failing : store_state::hanging;
              note("SIM", what == 0 ? "store failing" : "store hanging");
              at(now_ + length, [this] {
                state_ = store_state::healthy;
                note("SIM", "store healthy");
              });
            },
            true);
        break;
      case 2:
        at(
            t,
            [this, length] {
              const std::size_t i = target();
              nodes_[i].partitioned = true;
              note(nodes_[i].label(i), "SIM partitioned");
              at(now_ + length, [this, i] {
                nodes_[i].partitioned = false;
                note(nodes_[i].label(i), "SIM partition healed");
              });
            },
            true);
        break;
      case 3:
        at(
            t,
            [this, length] {
              const std::size_t i = target();
              crash(i, chance(0.3));
              at(now_ + length, [this, i] { restart(i, true); });
            },
            true);
        break;
      case 4:
        at(
            t,
            [this, length] {
              const std::size_t i = target();
              stop(i);
              const bool fresh = chance(0.5);
              at(now_ + length, [this, i, fresh] { restart(i, fresh); });
            },
            true);
        break;
      case 5:
        at(
            t, [this] { resign(target()); }, true);
        break;
      case 6:
        at(
            t, [this] { suspend(target(), uniform(1s, 4 * 15s)); }, true);
        break;
      case 7:
        at(
            t, [this] { freeze_process(target(), uniform(1s, 4 * 15s)); }, true);
        break;
      case 8:
        at(
            t, [this] { step_wall_clock(target()); }, true);
        break;
      case 10:
        at(
            t, [this] { group_stop(target(), uniform(1s, 4 * 15s)); }, true);
        break;
      case 11:
        at(
            t, [this] { job_stops_guardian(target()); }, true);
        break;
      default:
        break;  // quiet
    }
  }
}

// The s3lect process dies; with `machine`, the whole machine (a suspended machine's processes
// cannot die alone): its guardian and job die too.
inline void world::crash(std::size_t i, bool machine) {
  node& n = nodes_[i];
  if (!n.alive) return;
  machine = machine || n.suspended;
  note(n.label(i), std::string(machine ? "SIM machine crashed" : "SIM process crashed") +
                       (n.suspended ? " while suspended"
                        : n.frozen  ? " while frozen"
                                    : ""));
  if (n.leader) {
    checker_.ended(n.period, n.suspended ? n.suspended_since : n.frozen ? n.frozen_since : now_);
  }
  guardian_process_died(i, machine);
  end_suspend(i);
  n.frozen = false;
  n.deferred.clear();
  n.leader = false;
  n.alive = false;
  n.running = false;
  n.machine_down = machine;
  ++n.incarnation;  // its replies and timers are dropped; requests on the wire still land
  n.core.reset();   // a restart is a new process, whatever restart was scheduled
  n.op.reset();
  n.first_read.clear();
  n.told.clear();
  // The kernel of a machine that lives on closes a dead process's connections; a dead machine's
  // connections just go silent (the watchers' own deadlines answer them).
  for (const held_watch& watch : n.watches) {
    if (!machine) {
      reply_later(watch.follower, watch.op, now_ + uniform(1ms, 30ms), errc::connection_lost);
    }
  }
  n.watches.clear();
}

inline void world::stop(std::size_t i) {
  node& n = nodes_[i];
  if (!n.alive || !n.running || n.suspended || n.frozen) return;  // it calls nothing
  note(n.label(i), "SIM stop()");
  apply(i, n.core->stop(local(n, now_)));
}

inline void world::resign(std::size_t i) {
  node& n = nodes_[i];
  if (!n.alive || !n.running || n.suspended || n.frozen) return;
  const auto hold_off = std::chrono::duration_cast<milliseconds>(uniform(0s, 20s));
  std::optional<std::string> successor;
  if (scenario_.coordinated && chance(0.5)) successor = nodes_[rng_() % nodes_.size()].id;
  note(n.label(i), "SIM resign() hold_off=" + std::to_string(hold_off.count()) + "ms" +
                       (successor ? " to " + *successor : ""));
  apply(i, n.core->resign(local(n, now_), hold_off, successor));
}

inline void world::restart(std::size_t i, bool fresh) {
  node& n = nodes_[i];
  const bool stopping = n.alive && n.running && n.core->role() == core_role::stopping;
  if (n.alive && n.running && !stopping) return;
  if (stopping || n.op || n.suspended || n.frozen) {  // still releasing: try again later
    at(now_ + 1s, [this, i, fresh] { restart(i, fresh); });
    return;
  }
  if (fresh || !n.core) {
    ++n.incarnation;
    n.core = std::make_unique<election_core>(with_id(n.config, i), true);  // an in-process store
    n.op.reset();
    n.leader = false;
    n.first_read.clear();
    n.told.clear();
    n.candidates.clear();
    n.watching_since.clear();
    new_guardian(i);
  }
  n.alive = true;
  n.machine_down = false;
  n.running = true;
  note(n.label(i), fresh ? "SIM started (new process)" : "SIM started again");
  apply(i, n.core->start(local(n, now_)));
}

inline void world::suspend(std::size_t i, nanoseconds length) {
  node& n = nodes_[i];
  if (!n.alive || n.suspended) return;
  if (n.leader) ++suspended_leaders_;
  n.suspended = true;
  n.suspended_since = now_;
  const std::uint64_t which = ++n.suspends;
  note(n.label(i), "SIM suspended for " + in_ms(length) + (n.leader ? " (leader)" : ""));
  guardian_machine_suspended(i);
  at(now_ + length, [this, i, which] {
    node& m = nodes_[i];
    if (!m.suspended || m.suspends != which) return;
    end_suspend(i);
    note(m.label(i), "SIM woke up");
    guardian_machine_woke(i);  // first: a job past its deadline must not act on waking
    if (!m.frozen) answer_changed_watches(i);
    redeliver(i);
  });
}

// What waited for the node's s3lect process: delivered in order, or deferred again if it
// still cannot run.
inline void world::redeliver(std::size_t i) {
  auto deferred = std::move(nodes_[i].deferred);
  nodes_[i].deferred.clear();
  for (auto& action : deferred) at_node(i, now_, std::move(action));
}

// Freezes node i's s3lect process for `length`; its guardian and job run on. Some freezes end
// with the process killed (a watchdog, the OOM killer, an operator's kill -9 of a hung process).
inline void world::freeze_process(std::size_t i, nanoseconds length) {
  node& n = nodes_[i];
  // A job that stops its guardian while s3lect is stopped too keeps running: outside the
  // promise (docs/safety-and-fencing.md#what-can-still-keep-a-job-past-its-lease), so never
  // both, but in the negative control's group stop.
  if (!n.alive || n.frozen || (n.guardian_stopped && !scenario_.guardian_in_s3lects_group)) {
    return;
  }
  if (n.leader) ++frozen_leaders_;
  n.frozen = true;
  n.frozen_since = now_;
  const std::uint64_t which = ++n.freezes_started;
  const bool killed = chance(0.3);
  note(n.label(i), "SIM process frozen for " + in_ms(length) + (n.leader ? " (leader)" : "") +
                       (killed ? ", then killed" : ""));
  at(now_ + length, [this, i, which, killed] {
    node& m = nodes_[i];
    if (!m.frozen || m.freezes_started != which) return;
    if (killed) {
      crash(i, false);
      return at(now_ + uniform(1s, 25s), [this, i] { restart(i, true); });
    }
    m.frozen = false;
    note(m.label(i), "SIM process thawed");
    if (!m.suspended) answer_changed_watches(i);
    redeliver(i);
  });
}

// SIGSTOP of s3lect's whole process group, then SIGCONT: the guardian is in a session of its
// own, so this is a freeze of the s3lect process alone; in the negative control the guardian,
// in the same group, stops and resumes with it.
inline void world::group_stop(std::size_t i, nanoseconds length) {
  node& n = nodes_[i];
  if (!n.alive || n.frozen || n.guardian_stopped) return;
  if (n.leader) ++group_stops_;
  note(n.label(i), "SIM process group stopped");
  freeze_process(i, length);
  if (!scenario_.guardian_in_s3lects_group || !n.frozen) return;
  n.guardian_stopped = true;
  const std::uint64_t which = n.freezes_started;
  at(now_ + length, [this, i, which] {
    node& m = nodes_[i];
    if (m.freezes_started != which || !m.guardian_stopped) return;
    m.guardian_stopped = false;
    guardian_resumed(i);
  });
}

// A process of the leader's job stops its guardian (kill -STOP $PPID, without a PID
// namespace). It stays stopped until s3lect resumes it: at its next report, or when it stops the
// job.
inline void world::job_stops_guardian(std::size_t i) {
  node& n = nodes_[i];
  if (!n.alive || n.frozen || n.suspended || n.guardian_stopped || !n.guardian.job) return;
  if (n.leader) ++guardian_stops_;
  n.guardian_stopped = true;
  note(n.label(i), "SIM the job stopped its guardian");
}

inline void world::end_suspend(std::size_t i) {
  node& n = nodes_[i];
  if (!n.suspended) return;
  n.suspended = false;
  if (!scenario_.boot_clock_counts_suspend) n.freezes.push_back({n.suspended_since, now_});
}

inline void world::step_wall_clock(std::size_t i) {
  node& n = nodes_[i];
  const nanoseconds size = chance(0.5) ? uniform(1s, 59s) : uniform(1min, 10min);
  const nanoseconds by = chance(0.5) ? size : -size;
  n.wall_offset += by;
  note(n.label(i), "SIM wall clock stepped by " + in_ms(by));
}

}  // namespace s3lect::test::simulation
