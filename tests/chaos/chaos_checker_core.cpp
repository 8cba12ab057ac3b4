#include "chaos_checker_core.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace s3lect::chaos {

namespace {

constexpr micros ms_to_us(std::chrono::milliseconds ms) {
  return ms.count() * 1000;
}

using interval = std::pair<micros, micros>;  // [first, second), empty when second <= first
using interval_set = std::vector<interval>;  // sorted, disjoint after normalize

interval_set normalize(interval_set set) {
  std::erase_if(set, [](const interval& i) { return i.second <= i.first; });
  std::sort(set.begin(), set.end());
  interval_set out;
  for (const auto& i : set) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

interval_set subtract(const interval_set& from, const interval_set& removed) {
  interval_set out;
  for (auto [a, b] : from) {
    for (const auto& [c, d] : removed) {
      if (d <= a || c >= b) continue;
      if (c > a) out.emplace_back(a, c);
      a = std::max(a, d);
      if (a >= b) break;
    }
    if (a < b) out.emplace_back(a, b);
  }
  return normalize(std::move(out));
}

interval_set intersect(const interval_set& x, const interval_set& y) {
  interval_set out;
  for (const auto& [a, b] : x) {
    for (const auto& [c, d] : y) {
      const micros lo = std::max(a, c), hi = std::min(b, d);
      if (lo < hi) out.emplace_back(lo, hi);
    }
  }
  return normalize(std::move(out));
}

micros measure(const interval_set& set) {
  return std::accumulate(set.begin(), set.end(), micros{0},
                         [](micros sum, const interval& i) { return sum + i.second - i.first; });
}

std::string seconds_text(micros us) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f s", static_cast<double>(us) / 1e6);
  return buffer;
}

std::string ms_text(micros us) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", static_cast<double>(us) / 1e3);
  return buffer;
}

/// Faults on a node's s3lect alone (a freeze, a lone SIGKILL): counted, and for those that hit
/// the node while its job ran, how long the job's tree lived on.
void find_lone_faults(const chaos_log& log, chaos_report& report) {
  std::vector<const interval_event*> lone;
  for (const auto& f : log.freezes) lone.push_back(&f);
  for (const auto& f : log.faults) {
    if (f.kind == "kill" && f.detail == "s3lect-only") lone.push_back(&f);
  }
  for (const interval_event* f : lone) {
    const bool freeze = f->kind == "freeze";
    ++(freeze ? report.lone_freezes : report.lone_kills);
    // Its job: the node's latest command started since its s3lect did and still running.
    // Older trees of the node (an earlier s3lect's, or an earlier leadership's) that outlived
    // their leadership may still run too: they are not this s3lect's job.
    micros started = 0;
    if (const auto it = log.restarts.find(f->target); it != log.restarts.end()) {
      for (const micros t : it->second) {
        if (t <= f->from) started = std::max(started, t);
      }
    }
    const child_run* job = nullptr;
    for (const auto& c : log.children) {
      if (c.node == f->target && c.start >= started && c.start <= f->from) job = &c;
    }
    if (job && job->end <= f->from) job = nullptr;
    if (!job) continue;
    report.lone_faults.push_back({f->kind, f->target, f->from, freeze ? f->to - f->from : 0,
                                  job->end - f->from, freeze && job->end > f->to, f->line});
  }
  std::sort(report.lone_faults.begin(), report.lone_faults.end(),
            [](const lone_fault& a, const lone_fault& b) { return a.at < b.at; });
}

}  // namespace

micros checker_timings::retry_schedule() const {
  micros total = ms_to_us(request_timeout) * static_cast<micros>(retry_delays.size() + 1);
  for (const auto delay : retry_delays) total += ms_to_us(delay);
  return total;
}

micros checker_timings::liveness_bound() const {
  // After the last fault ends: a follower's next read comes within I (plus a read that was
  // already retrying), the record it reads expires L after that read (rule b), the takeover
  // write may need its whole retry schedule and one more frequent read to resolve an unknown
  // outcome, and the winner's previous command may still be stopping (kill grace).
  return ms_to_us(infrequent) + retry_schedule() + ms_to_us(lease) + retry_schedule() +
         ms_to_us(frequent) + ms_to_us(kill_grace) + ms_to_us(slack);
}

micros checker_timings::resume_window() const {
  return ms_to_us(kill_grace) + ms_to_us(resume_tolerance);
}

namespace {

// A forged claim must move nothing (docs/peer-mode.md#claims-that-cannot-be-forged): no record
// or answer may name a forged id, no forged id may run a command, and a flood that no node ever
// answered proved nothing.
void check_claim_floods(const chaos_log& log, chaos_report& report) {
  for (const auto& flood : log.floods) {
    report.forged_claims += flood.sent;
    report.forged_answered += flood.answered;
    if (flood.named > 0) {
      report.violations.push_back({"claim_flood",
                                   std::to_string(flood.named) +
                                       " records or answers named a forged id (" + flood.id_prefix +
                                       "*) as leader, successor or candidate",
                                   {flood.line}});
    }
    if (flood.answered == 0) {
      report.violations.push_back(
          {"claim_flood",
           "no node answered any of the " + std::to_string(flood.sent) + " forged claims",
           {flood.line}});
    }
    for (const auto& run : log.children) {
      if (!run.node.starts_with(flood.id_prefix)) continue;
      report.violations.push_back(
          {"claim_flood",
           "forged id " + run.node + " ran a command (term " + std::to_string(run.term) + ")",
           {run.start_line, flood.line}});
    }
  }
}

}  // namespace

chaos_report check_chaos_log(const chaos_log& log, const checker_timings& timings) {
  chaos_report report;
  report.leaderships = log.children.size();
  report.liveness_bound = timings.liveness_bound();
  report.resume_window = timings.resume_window();
  report.duration = log.finish - log.begin;
  for (const auto& f : log.faults) ++report.faults_by_kind[f.kind];
  for (const auto& error : log.errors) report.violations.push_back({"log", error, {}});
  // A descriptor of s3lect's or the guardian's in a job's reach lets it fool s3lect (forge
  // the end of the job, so that s3lect releases while the job runs on): none may be taken.
  report.thefts_tried = log.thefts.size();
  for (const auto& attempt : log.thefts) {
    if (attempt.taken == 0) continue;
    report.violations.push_back({"theft",
                                 attempt.node + "'s command (term " + std::to_string(attempt.term) +
                                     ") took " + std::to_string(attempt.taken) +
                                     " descriptors of its guardian's",
                                 {attempt.line}});
  }

  check_claim_floods(log, report);

  // Per node: when all of its processes were stopped (a frozen machine: `stop`), and the
  // windows after each resume. A freeze of s3lect alone opens none: its job never stopped.
  std::map<std::string, interval_set> stopped, resumed;
  for (const auto& s : log.stops) {
    stopped[s.target].emplace_back(s.from, s.to);
    resumed[s.target].emplace_back(s.to, s.to + report.resume_window);
  }
  for (auto& [node, set] : stopped) set = normalize(std::move(set));
  for (auto& [node, set] : resumed) set = normalize(std::move(set));
  const auto stops_of = [&](const std::map<std::string, interval_set>& m, const std::string& n) {
    const auto it = m.find(n);
    return it == m.end() ? interval_set{} : it->second;
  };
  const auto stop_evidence = [&](const std::string& node, micros from, micros to) {
    std::vector<log_line> lines;
    for (const auto& s : log.stops) {
      if (s.target == node && s.to + report.resume_window >= from && s.from <= to) {
        lines.push_back(s.line);
      }
    }
    return lines;
  };

  // A command runs from its start record to its end (its whole tree's, when watched), except
  // while its node is stopped.
  std::vector<interval_set> active(log.children.size());
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    const child_run& c = log.children[i];
    active[i] = subtract({{c.start, std::max(c.end, c.start + 1)}}, stops_of(stopped, c.node));
    if (c.end_source == "finish") {
      report.violations.push_back({"log",
                                   "command of " + c.node + " term " + std::to_string(c.term) +
                                       " never ended (no end, kill, exit or reaped record)",
                                   {c.start_line}});
    }
  }

  // Rule 2: terms strictly increase in the order commands start, whichever node: a command's
  // term must exceed every earlier command's. Two exceptions, both counted:
  //  - a stale start: a lower term whose command starts and ends inside its own node's resume
  //    window (a stopped s3lect that resumed and had not yet learnt that it lost);
  //  - the same node's term again, right after that node's previous command under it, with no
  //    other command started in between: the node demoted, then a renewal it had sent landed
  //    and it took its own record back. Nobody else can have written in between (that renewal
  //    was conditional on the node's own record), so the token still fences. Once any other
  //    command has started, the term is used up. This is the only way one term starts twice:
  //    s3lect starts its command once per leadership, and a command that exits ends it.
  // Rule 3: a term belongs to one node.
  std::vector<bool> stale(log.children.size(), false);
  std::map<std::uint64_t, std::size_t> by_term;
  std::optional<std::size_t> highest;  // the earliest command with the highest term so far
  std::optional<std::size_t> latest;   // the last command started so far (stale starts aside)
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    const child_run& c = log.children[i];
    if (const auto it = by_term.find(c.term); it == by_term.end()) {
      by_term.emplace(c.term, i);
    } else if (const child_run& other = log.children[it->second]; other.node != c.node) {
      report.violations.push_back(
          {"term_reuse",
           "term " + std::to_string(c.term) + " used by " + other.node + " and " + c.node,
           {other.start_line, c.start_line}});
    }
    if (!highest || c.term > log.children[*highest].term) {
      highest = latest = i;
      continue;
    }
    const child_run& prior = log.children[*highest];
    const child_run& previous = log.children[*latest];
    if (c.term == prior.term && previous.node == c.node && previous.term == c.term) {
      ++report.resumed_terms;
      latest = i;
      continue;
    }
    const interval_set span{{c.start, std::max(c.end, c.start + 1)}};
    if (c.term < prior.term && subtract(span, stops_of(resumed, c.node)).empty()) {
      stale[i] = true;
      ++report.stale_starts;
      continue;
    }
    const std::string what = "term " + std::to_string(c.term) + " (" + c.node + ")";
    std::vector<log_line> evidence{prior.start_line};
    if (*latest != *highest) evidence.push_back(previous.start_line);
    evidence.push_back(c.start_line);
    report.violations.push_back(
        {"term_order",
         c.term < prior.term
             ? what + " started after term " + std::to_string(prior.term) + " (" + prior.node + ")"
             : what + " started again after " + previous.node + "'s term " +
                   std::to_string(previous.term) + " had started",
         evidence});
    latest = i;
  }

  // Rule 1: no two commands run at the same time. An overlap is excused only while the
  // older-term command's node is inside a resume window.
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    for (std::size_t j = i + 1; j < log.children.size(); ++j) {
      const child_run& a = log.children[i];
      const child_run& b = log.children[j];
      if (b.start >= a.end) continue;
      const interval_set both = intersect(active[i], active[j]);
      if (both.empty()) continue;
      const child_run& older = a.term <= b.term ? a : b;
      const child_run& newer = a.term <= b.term ? b : a;
      const interval_set unexcused = subtract(both, stops_of(resumed, older.node));
      if (unexcused.empty() && older.term < newer.term) {
        ++report.excused_overlaps;
        report.max_excused_overlap = std::max(report.max_excused_overlap, measure(both));
        continue;
      }
      // Two commands of one term inside a resume window: no part is excused, all is reported.
      const interval_set& reported = unexcused.empty() ? both : unexcused;
      std::vector<log_line> evidence;
      for (const child_run* c : {&older, &newer}) {
        evidence.push_back(c->start_line);
        if (c->command_end_line.number && c->command_end_line.number != c->end_line.number) {
          evidence.push_back(c->command_end_line);
        }
        if (c->end_line.number) evidence.push_back(c->end_line);
      }
      for (const auto& line : stop_evidence(older.node, both.front().first, both.back().second)) {
        evidence.push_back(line);
      }
      report.violations.push_back({"overlap",
                                   older.node + " term " + std::to_string(older.term) + " and " +
                                       newer.node + " term " + std::to_string(newer.term) +
                                       " ran together for " + ms_text(measure(reported)) +
                                       " beyond any resume window, from " +
                                       seconds_text(reported.front().first - log.begin),
                                   evidence});
    }
  }

  find_lone_faults(log, report);

  std::optional<std::size_t> previous;
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    if (stale[i]) continue;
    if (previous && log.children[*previous].node != log.children[i].node) {
      const micros separation = log.children[i].start - log.children[*previous].end;
      if (separation >= 0 && (!report.min_separation || separation < *report.min_separation)) {
        report.min_separation = separation;
      }
    }
    previous = i;
  }

  // Rule 4: a leader exists again within B after every fault. Gaps are the stretches of the
  // run with no running command (stale starts do not count as leaders).
  interval_set leading;
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    if (!stale[i]) leading.insert(leading.end(), active[i].begin(), active[i].end());
  }
  const interval_set gaps = subtract({{log.begin, log.finish}}, normalize(std::move(leading)));
  interval_set allowed;
  for (const auto& f : log.faults) allowed.emplace_back(f.from, f.to + report.liveness_bound);
  for (const auto& [g0, g1] : gaps) allowed.emplace_back(g0, g0 + report.liveness_bound);
  allowed = normalize(std::move(allowed));
  for (const auto& [g0, g1] : gaps) {
    if (g1 - g0 > report.max_gap) {
      report.max_gap = g1 - g0;
      report.max_gap_from = g0;
    }
    const interval_set excess = subtract({{g0, g1}}, allowed);
    if (excess.empty()) continue;
    report.max_excess = std::max(report.max_excess, measure(excess));
    std::vector<log_line> evidence;
    for (std::size_t i = 0; i < log.children.size(); ++i) {
      const child_run& c = log.children[i];
      if ((c.end <= g0 && c.end + 5'000'000 > g0) || (c.start >= g1 && c.start < g1 + 1)) {
        evidence.push_back(c.start_line);
        if (c.end_line.number) evidence.push_back(c.end_line);
      }
    }
    for (const auto& f : log.faults) {
      if (f.to + report.liveness_bound >= g0 - 5'000'000 && f.from <= g1) {
        evidence.push_back(f.line);
      }
    }
    report.violations.push_back(
        {"liveness",
         "no leader from " + seconds_text(g0 - log.begin) + " to " + seconds_text(g1 - log.begin) +
             " (" + ms_text(g1 - g0) + "), " + ms_text(measure(excess)) +
             " of it beyond B = " + ms_text(report.liveness_bound) + " after any fault",
         evidence});
  }
  return report;
}

std::string format_report(const chaos_report& report, const chaos_log& log) {
  std::ostringstream out;
  out << "chaos check: " << (report.violations.empty() ? "PASS" : "FAIL") << "\n";
  out << "duration: " << seconds_text(report.duration) << "\n";
  out << "leaderships: " << report.leaderships << ", transitions: " << report.transitions() << "\n";
  out << "faults:";
  std::size_t total = 0;
  for (const auto& [kind, count] : report.faults_by_kind) {
    out << " " << kind << "=" << count;
    total += count;
  }
  out << " (total " << total << ")\n";
  out << "liveness bound B: " << ms_text(report.liveness_bound)
      << ", resume window R: " << ms_text(report.resume_window) << "\n";
  out << "max leaderless gap: " << ms_text(report.max_gap);
  if (report.max_gap > 0) out << " (from " << seconds_text(report.max_gap_from - log.begin) << ")";
  out << ", beyond fault windows + B: " << ms_text(report.max_excess) << "\n";
  out << "stopped leaders resumed into a newer term: " << report.excused_overlaps
      << " overlaps (max " << ms_text(report.max_excused_overlap) << "), " << report.stale_starts
      << " stale starts\n";
  out << "commands restarted under their node's own term: " << report.resumed_terms << "\n";
  out << "commands that tried to take their guardian's descriptors: " << report.thefts_tried
      << "\n";
  if (!log.floods.empty()) {
    out << "forged candidate claims: " << report.forged_claims << " sent, "
        << report.forged_answered << " answered\n";
  }
  if (report.min_separation) {
    out << "closest handover between nodes: " << ms_text(*report.min_separation) << "\n";
  }
  for (const std::string kind : {"freeze", "kill"}) {
    const bool freeze = kind == "freeze";
    out << (freeze ? "s3lect frozen alone: " : "s3lect killed alone: ")
        << (freeze ? report.lone_freezes : report.lone_kills) << "\n";
    for (const auto& f : report.lone_faults) {
      if (f.kind != kind) continue;
      out << "  " << f.node << " at " << seconds_text(f.at - log.begin);
      if (freeze) out << " for " << ms_text(f.duration);
      out << ": its job's tree was gone " << ms_text(f.tree_gone_after) << " after"
          << (f.outlived ? " (it outlived the freeze)" : "") << "\n";
    }
  }
  out << "violations: " << report.violations.size() << "\n";
  for (const auto& v : report.violations) {
    out << "  [" << v.rule << "] " << v.message << "\n";
    for (const auto& line : v.evidence) {
      out << "      line " << line.number << ": " << line.text << "\n";
    }
  }
  return out.str();
}

}  // namespace s3lect::chaos
