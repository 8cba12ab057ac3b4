// The guardians of the election simulation: the member functions of world that run each node's
// `s3lect run` guardian and its job (support/simulation/jobs.hpp says what a job is and
// what is checked). Included by election_core_simulation_test.cpp, after the world.
//
// After each step of its core, a node's s3lect process tells its guardian what the CLI tells it:
// while it leads, "leading until T" with T = S + D (leadership_deadline(), from the send time of
// held_record()) and the term and nonce of held_record(), which changes after every successful
// write; and "stop" when it reports a loss (the job exits within G). The guardian kills the job at
// T + G by its own boot clock unless a newer T arrived, and runs one job tree at a time: a
// leadership gained while the previous job is still exiting starts its job once that one is gone.
// Before s3lect writes a released record (stop, resign) no job of any term may be left: the CLI
// stops the command and waits for its tree to be gone, which the simulation counts as taking no
// time (the core sends the release in the same step).
//
// When the s3lect process dies and the guardian does not (a process crash, not a machine crash),
// the guardian kills the job at once and, 5-100 ms later (the tree reaped), performs the crash
// release: it reads the lock, and only if the record is not released and carries the nonce and
// term s3lect last reported, it writes a released copy (same holder and term, released, a fresh
// nonce) with If-Match on the ETag it read. An unknown outcome (a timeout, a 5xx, a 409) is
// resolved by reading again: our released copy means done, the reported record unchanged means
// write again, anything else means someone wrote since (e.g. a renewal s3lect had in flight when
// it died, which may land after its death): the lease then runs out. A 412 ends it too. Its
// requests meet the same store, latencies and faults as the cores'.
#pragma once

#include "support/simulation/world.hpp"

namespace s3lect::test::simulation {

/// A guardian's crash release after its s3lect process died.
struct crash_release {
  std::size_t node = 0;
  process_id process;  ///< The dead s3lect process, for whom the guardian writes.
  int machine = 0;     ///< The guardian dies with its machine.
  nanoseconds crashed_at{0};
  guardian_report report;      ///< What s3lect last reported.
  std::string released_nonce;  ///< Of the released copy, once one was sent.
  int requests = 0;
};

/// Requests a guardian sends for one crash release before it gives up (the lease then runs
/// out, as when it finds someone else's record).
constexpr int max_crash_release_requests = 8;

inline void world::new_guardian(std::size_t i) {
  guardian_state& g = nodes_[i].guardian;
  // A violation, not a test failure: the negative controls must be able to count it.
  if (g.job)
    checker_.violation(now_, "a new s3lect process, and the previous one's job still runs");
  nodes_[i].guardian_stopped = false;
  g.report.reset();
  g.waiting_term.reset();
  ++g.timer_generation;
}

inline void world::guardian_after_step(std::size_t i, const step& s) {
  node& n = nodes_[i];
  const std::vector<core_notice>& notices = s.notices;
  for (const core_notice& notice : notices) {
    if (std::get_if<leadership_lost>(&notice)) job_told_to_stop(i);
  }
  const bool releasing = s.operation && s.operation->type == storage_request::kind::write &&
                         decode_record(s.operation->body).record.value_or(lock_record{}).released;
  if (releasing) kill_job(i, "stopped before the release");  // an older term's exiting job too
  if (n.core->is_leader()) report_to_guardian(i);
  for (const core_notice& notice : notices) {
    const auto* gained = std::get_if<leadership_gained>(&notice);
    if (!gained) continue;
    if (n.guardian.job) {
      n.guardian.waiting_term = gained->term;
      note(n.label(i), "GUARDIAN the job of term " + std::to_string(gained->term) +
                           " waits for the previous one to exit");
    } else {
      start_job(i, gained->term);
    }
  }
}

// s3lect resumes a guardian it finds stopped (SIGCONT): at each report, and when it stops the
// job.
inline void world::resume_guardian(std::size_t i) {
  node& n = nodes_[i];
  if (!n.guardian_stopped || scenario_.stop_waits_for_a_stopped_guardian) return;
  n.guardian_stopped = false;
  note(n.label(i), "GUARDIAN resumed by s3lect");
  guardian_resumed(i);
}

inline void world::guardian_resumed(std::size_t i) {
  node& n = nodes_[i];
  if (n.suspended) return;  // the machine's wake-up delivers what waits
  auto deferred = std::move(n.guardian_deferred);
  n.guardian_deferred.clear();
  for (auto& action : deferred) at_guardian(i, now_, std::move(action));
}

inline void world::report_to_guardian(std::size_t i) {
  node& n = nodes_[i];
  resume_guardian(i);
  const lock_record& held = *n.core->held_record();
  guardian_report report{*n.core->leadership_deadline(), held.term, held.nonce};
  if (scenario_.guardian_deadline_a_lease_late) {
    report.until += n.config.lease - n.config.renew_deadline;
  }
  n.guardian.report = report;
  std::optional<running_job>& job = n.guardian.job;
  if (job && !job->stopping && job->term == report.term &&
      job->kill_at != report.until + n.guardian.kill_grace) {
    job->kill_at = report.until + n.guardian.kill_grace;
    arm_guardian(i);
  }
}

inline void world::job_told_to_stop(std::size_t i) {
  node& n = nodes_[i];
  guardian_state& g = n.guardian;
  g.report.reset();
  g.waiting_term.reset();
  if (!g.job || g.job->stopping) return;
  g.job->stopping = true;
  // SIGTERM, and SIGKILL G later.
  const steady_time exits = local(n, now_).steady + uniform(0ms, g.kill_grace);
  g.job->kill_at = std::min(g.job->kill_at, exits);
  arm_guardian(i);
  resume_guardian(i);
  if (scenario_.stop_waits_for_a_stopped_guardian) return;
  // A hostile job may stop its guardian during the stop; s3lect then ends the tree itself once
  // the guardian has not reported its end within G and the margin (1 s).
  if (scenario_.guardian_attacks && !n.guardian_stopped && chance(0.3)) {
    n.guardian_stopped = true;
    note(n.label(i), "SIM the job stopped its guardian during the stop");
  }
  if (!n.guardian_stopped) return;
  const std::size_t index = g.job->index;
  at_node(i, now_ + g.kill_grace + 1s, [this, i, index] {
    node& m = nodes_[i];
    if (!m.guardian.job || m.guardian.job->index != index) return;
    ++unanswered_stops_;
    m.guardian_stopped = false;  // SIGKILL: the guardian is gone with the tree
    kill_job(i, "killed by s3lect: its guardian did not answer");
    m.guardian_deferred.clear();
  });
}

inline void world::start_job(std::size_t i, std::uint64_t term) {
  node& n = nodes_[i];
  guardian_state& g = n.guardian;
  g.waiting_term.reset();
  // s3lect asked for it while leading; by now it may have lost, or its time may be up.
  if (!g.report || g.report->term != term || local(n, now_).steady >= g.report->until) return;
  const std::size_t index = jobs_.started(now_, n.process(i), n.label(i), term);
  g.job = running_job{index, term, g.report->until + g.kill_grace, false};
  arm_guardian(i);
}

inline void world::kill_job(std::size_t i, const std::string& how) {
  guardian_state& g = nodes_[i].guardian;
  if (!g.job) return;
  jobs_.ended(g.job->index, now_, how);
  g.job.reset();
  ++g.timer_generation;
  if (g.waiting_term) start_job(i, *g.waiting_term);
}

inline void world::arm_guardian(std::size_t i) {
  node& n = nodes_[i];
  const std::uint64_t generation = ++n.guardian.timer_generation;
  if (!n.guardian.job) return;
  const steady_time when = n.guardian.job->kill_at;
  const int machine = n.machine;
  at_guardian(i, first_real(n, when).value_or(now_), [this, i, generation, machine, when] {
    node& m = nodes_[i];
    if (m.machine != machine || m.guardian.timer_generation != generation) return;
    // A boot clock that stopped during a suspend (negative control) gets there later.
    if (local(m, now_).steady < when) return arm_guardian(i);
    if (m.guardian.job->stopping) return kill_job(i, "exited after the loss");
    ++deadline_kills_;
    kill_job(i, "killed by the guardian at T + G");
  });
}

inline void world::guardian_machine_suspended(std::size_t i) {
  const guardian_state& g = nodes_[i].guardian;
  if (g.job) jobs_.paused(g.job->index, now_);
}

inline void world::guardian_machine_woke(std::size_t i) {
  node& n = nodes_[i];
  guardian_state& g = n.guardian;
  if (g.job) {
    // The guardian's boot clock counted the suspend: a deadline that passed meanwhile is acted
    // on before the job can do anything.
    if (local(n, now_).steady >= g.job->kill_at) {
      if (!g.job->stopping) ++deadline_kills_;
      kill_job(i, "killed on waking: its deadline passed during the suspend");
    } else {
      jobs_.resumed(g.job->index, now_);
    }
  }
  auto deferred = std::move(n.guardian_deferred);
  n.guardian_deferred.clear();
  for (auto& action : deferred) at_guardian(i, now_, std::move(action));
}

inline void world::guardian_process_died(std::size_t i, bool machine) {
  node& n = nodes_[i];
  guardian_state& g = n.guardian;
  // A guardian its job had stopped is resumed by the kernel when s3lect dies (its parent death
  // signal is SIGCONT), and then acts at once; with its machine it is gone anyway.
  const bool was_stopped = std::exchange(n.guardian_stopped, false);
  if (was_stopped && !machine) note(n.label(i), "GUARDIAN resumed by s3lect's death");
  const std::optional<guardian_report> report = g.report;
  g.report.reset();
  g.waiting_term.reset();
  kill_job(i, machine ? "gone with its machine" : "killed by the guardian: s3lect died");
  if (machine) {
    ++n.machine;
    n.guardian_deferred.clear();
    return;
  }
  if (!report) return;  // s3lect did not lead (or said it stopped): nothing to release
  auto task = std::make_shared<crash_release>();
  task->node = i;
  task->process = n.process(i);
  task->machine = n.machine;
  task->crashed_at = now_;
  task->report = *report;
  at_guardian(i, now_ + uniform(5ms, 100ms), [this, task] { crash_release_read(task); });
}

inline bool world::crash_release_over(const crash_release& task, const std::string& why) {
  const node& n = nodes_[task.node];
  if (n.machine != task.machine) return true;
  if (task.requests < max_crash_release_requests) return false;
  note(n.id + "@" + std::to_string(task.node), "GUARDIAN gives up the crash release: " + why);
  return true;
}

inline void world::crash_release_read(const std::shared_ptr<crash_release>& task) {
  if (crash_release_over(*task, "too many failed requests")) return;
  storage_request request;
  request.type = storage_request::kind::read;
  guardian_request(task, std::move(request), [this, task](error_code ec, const operation& op) {
    if (!ec) return crash_release_decide(task, op.read_value);
    at_guardian(task->node, now_ + 1s, [this, task] { crash_release_read(task); });
  });
}

inline void world::crash_release_decide(const std::shared_ptr<crash_release>& task,
                                        const get_result& read) {
  const std::string who = nodes_[task->node].id + "@" + std::to_string(task->node);
  if (!read.found) return note(who, "GUARDIAN nothing to release: no record");
  const record_decoding decoded = decode_record(read.found->body);
  if (!decoded.record) return note(who, "GUARDIAN nothing to release: unreadable record");
  const lock_record& record = *decoded.record;
  if (!task->released_nonce.empty() && record.nonce == task->released_nonce) {
    return note(who, "GUARDIAN crash release landed (its outcome was unknown)");
  }
  if (record.released) return note(who, "GUARDIAN nothing to release: released already");
  const bool last_reported = record.nonce == task->report.nonce && record.term == task->report.term;
  if (!last_reported && !scenario_.guardian_releases_unchecked) {
    return note(who, "GUARDIAN someone wrote since s3lect's last report: the lease runs out");
  }
  crash_release_write(task, record, read.found->etag);
}

inline void world::crash_release_write(const std::shared_ptr<crash_release>& task,
                                       const lock_record& record, const std::string& etag) {
  if (crash_release_over(*task, "too many unknown outcomes")) return;
  lock_record released = record;
  released.released = true;
  released.nonce = guardian_nonce();
  task->released_nonce = released.nonce;
  storage_request request;
  request.type = storage_request::kind::write;
  request.body = encode_record(released);
  request.condition = put_condition::matches(etag);
  guardian_request(task, std::move(request), [this, task](error_code ec, const operation&) {
    const std::string who = nodes_[task->node].id + "@" + std::to_string(task->node);
    if (!ec) return note(who, "GUARDIAN crash release written");
    if (ec == errc::precondition_failed) {
      return note(who, "GUARDIAN crash release refused (412): someone wrote since");
    }
    note(who, "GUARDIAN crash release outcome unknown: reading again");
    crash_release_read(task);
  });
}

inline void world::guardian_request(const std::shared_ptr<crash_release>& task,
                                    storage_request request,
                                    std::function<void(error_code, const operation&)> done) {
  ++task->requests;
  auto op = std::make_shared<operation>();
  op->request = std::move(request);
  op->sender = task->process;
  op->sent = local(nodes_[task->node], now_).steady;
  op->guardian = std::move(done);
  if (op->request.type == storage_request::kind::write) op->crashed_at = task->crashed_at;
  send_to_store(task->node, op);
}

inline std::string world::guardian_nonce() {
  static constexpr char hex[] = "0123456789abcdef";
  std::string nonce(16, '0');
  std::uint64_t bits = rng_();
  for (char& digit : nonce) {
    digit = hex[bits & 15u];
    bits >>= 4;
  }
  return nonce;
}

}  // namespace s3lect::test::simulation
