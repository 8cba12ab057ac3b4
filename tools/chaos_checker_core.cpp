#include "chaos_checker_core.hpp"

#include <algorithm>
#include <charconv>
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

std::optional<micros> parse_time(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  micros seconds = 0;
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  if (ec != std::errc{} || end != whole.data() + whole.size() || whole.empty()) return std::nullopt;
  micros fraction = 0;
  if (dot != std::string_view::npos) {
    std::string digits(text.substr(dot + 1));
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    digits.resize(6, '0');  // truncating beyond microseconds is within one microsecond
    fraction = std::stoll(digits);
  }
  return seconds * 1'000'000 + fraction;
}

template <class T>
bool parse_number(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size();
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

chaos_log parse_chaos_log(std::istream& in) {
  chaos_log log;
  struct death {
    std::string node;
    long pid = 0;  // 0: every process of the node
    micros at = 0;
    std::string source;
    log_line line;
  };
  std::vector<death> deaths;
  std::vector<bool> ended;
  std::vector<std::pair<micros, log_line>> stamps;  // every time in a record, for the span check
  std::string text;
  int number = 0;
  bool have_begin = false, have_finish = false;
  while (std::getline(in, text)) {
    ++number;
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty() || w[0][0] == '#') continue;
    const log_line line{number, text};
    const auto bad = [&](const std::string& why) {
      log.errors.push_back("line " + std::to_string(number) + ": " + why + ": " + text);
    };
    const auto stamp = [&](micros t) { stamps.emplace_back(t, line); };
    const std::string& kind = w[0];
    if ((kind == "begin" || kind == "finish") && w.size() == 2) {
      const auto t = parse_time(w[1]);
      if (!t) {
        bad("bad time");
        continue;
      }
      (kind == "begin" ? log.begin : log.finish) = *t;
      (kind == "begin" ? have_begin : have_finish) = true;
    } else if ((kind == "start" || kind == "end") && w.size() == 5) {
      std::uint64_t term = 0;
      long pid = 0;
      const auto t = parse_time(w[3]);
      if (!t || !parse_number(w[2], term) || !parse_number(w[4], pid)) {
        bad("bad start/end record");
        continue;
      }
      stamp(*t);
      if (kind == "start") {
        child_run run;
        run.node = w[1];
        run.term = term;
        run.pid = pid;
        run.start = *t;
        run.start_line = line;
        log.children.push_back(run);
        ended.push_back(false);
        continue;
      }
      bool matched = false;
      for (std::size_t i = log.children.size(); i-- > 0;) {
        child_run& run = log.children[i];
        if (!ended[i] && run.node == w[1] && run.pid == pid && run.term == term) {
          run.end = *t;
          run.end_source = "end";
          run.end_line = line;
          ended[i] = true;
          matched = true;
          break;
        }
      }
      // The command's trap ran before its start record was written: it never worked.
      if (!matched) ++log.aborted_starts;
    } else if (kind == "kill" && w.size() == 3) {
      const auto t = parse_time(w[2]);
      if (!t) {
        bad("bad kill record");
        continue;
      }
      stamp(*t);
      deaths.push_back({w[1], 0, *t, "kill", line});
    } else if (kind == "exit" && w.size() >= 3) {
      const auto t = parse_time(w[2]);
      if (!t) {
        bad("bad exit record");
        continue;
      }
      stamp(*t);
      deaths.push_back({w[1], 0, *t, "exit", line});
    } else if (kind == "reaped" && w.size() == 4) {
      long pid = 0;
      const auto t = parse_time(w[3]);
      if (!t || !parse_number(w[2], pid)) {
        bad("bad reaped record");
        continue;
      }
      stamp(*t);
      deaths.push_back({w[1], pid, *t, "reaped", line});
    } else if (kind == "stop" && w.size() == 4) {
      const auto from = parse_time(w[2]), to = parse_time(w[3]);
      if (!from || !to || *to < *from) {
        bad("bad stop record");
        continue;
      }
      stamp(*from);
      stamp(*to);
      interval_event stop{"stop", w[1], *from, *to, line};
      log.stops.push_back(stop);
      log.faults.push_back(stop);
    } else if (kind == "fault" && w.size() >= 5) {
      const auto from = parse_time(w[3]), to = parse_time(w[4]);
      if (!from || !to || *to < *from) {
        bad("bad fault record");
        continue;
      }
      stamp(*from);
      stamp(*to);
      log.faults.push_back({w[1], w[2], *from, *to, line});
    } else {
      bad("unknown record");
    }
  }
  if (!have_begin) log.errors.push_back("no begin record");
  if (!have_finish) log.errors.push_back("no finish record");
  // Everything happened between begin and finish, on the one true clock. A record outside was
  // dated by a clock that is off (a clock-fault node's, which only its s3lect may run on): its
  // times say nothing. The slack spares times rounded up (reaped); a leaked offset is minutes.
  constexpr micros span_slack = 1'000'000;
  for (const auto& [t, line] : stamps) {
    if (!have_begin || !have_finish) break;
    if (t >= log.begin - span_slack && t <= log.finish + span_slack) continue;
    log.errors.push_back("line " + std::to_string(line.number) + ": time " +
                         (t < log.begin ? "before begin" : "after finish") +
                         " (a node's clock in the log?): " + line.text);
  }
  for (std::size_t i = 0; i < log.children.size(); ++i) {
    if (ended[i]) continue;
    child_run& run = log.children[i];
    const death* first = nullptr;
    for (const auto& d : deaths) {
      if (d.node != run.node || d.at < run.start || (d.pid != 0 && d.pid != run.pid)) continue;
      if (!first || d.at < first->at) first = &d;
    }
    if (first) {
      run.end = first->at;
      run.end_source = first->source;
      run.end_line = first->line;
    } else {
      run.end = std::max(log.finish, run.start);
      run.end_source = "finish";
    }
  }
  std::stable_sort(log.children.begin(), log.children.end(),
                   [](const child_run& a, const child_run& b) { return a.start < b.start; });
  return log;
}

chaos_report check_chaos_log(const chaos_log& log, const checker_timings& timings) {
  chaos_report report;
  report.leaderships = log.children.size();
  report.liveness_bound = timings.liveness_bound();
  report.resume_window = timings.resume_window();
  report.duration = log.finish - log.begin;
  for (const auto& f : log.faults) ++report.faults_by_kind[f.kind];
  for (const auto& error : log.errors) report.violations.push_back({"log", error, {}});

  // Per node: when its process groups were stopped, and the windows after each SIGCONT.
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

  // A command runs from its start record to its end, except while its node is stopped.
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
      std::vector<log_line> evidence{older.start_line};
      if (older.end_line.number) evidence.push_back(older.end_line);
      evidence.push_back(newer.start_line);
      if (newer.end_line.number) evidence.push_back(newer.end_line);
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
  if (report.min_separation) {
    out << "closest handover between nodes: " << ms_text(*report.min_separation) << "\n";
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
