#include "fencing_checker_core.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace s3lect::chaos {
namespace {

std::int64_t to_us(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * 1e6));
}

std::string seconds_text(std::int64_t us) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(6);
  out << static_cast<double>(us) / 1e6;
  return out.str();
}

bool in_zombie_interval(const fenced_write_record& write, const std::vector<zombie_interval>& all) {
  return std::any_of(all.begin(), all.end(), [&](const zombie_interval& zombie) {
    return zombie.node == write.node && write.start_us >= zombie.since_us &&
           write.start_us <= zombie.until_us;
  });
}

std::int64_t higher_than(const std::map<std::uint64_t, std::int64_t>& earliest_of_term,
                         std::uint64_t term) {
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (auto it = earliest_of_term.upper_bound(term); it != earliest_of_term.end(); ++it) {
    earliest = std::min(earliest, it->second);
  }
  return earliest;
}

}  // namespace

fencing_log parse_fencing_log(std::istream& in) {
  fencing_log log;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "write") {
      fenced_write_record write;
      double start = 0;
      double end = 0;
      if (fields >> write.node >> write.term >> start >> end >> write.exit_code) {
        write.start_us = to_us(start);
        write.end_us = to_us(end);
        log.writes.push_back(write);
        continue;
      }
    } else if (kind == "zombie") {
      zombie_interval zombie;
      double since = 0;
      double until = 0;
      if (fields >> zombie.node >> since >> until) {
        zombie.since_us = to_us(since);
        zombie.until_us = to_us(until);
        log.zombies.push_back(zombie);
        continue;
      }
    }
    log.problems.push_back("unparsable line: " + line);
  }
  return log;
}

namespace {

/// The longest stretch of the run, between its first and last accepted write, with no write
/// being accepted (overlapping writes cover each other).
std::int64_t longest_unwritten(const std::vector<fenced_write_record>& writes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> accepted;
  for (const auto& write : writes) {
    if (write.exit_code == 0) accepted.emplace_back(write.start_us, write.end_us);
  }
  std::sort(accepted.begin(), accepted.end());
  std::int64_t longest = 0;
  std::int64_t written_until = accepted.empty() ? 0 : accepted.front().second;
  for (const auto& [start, end] : accepted) {
    longest = std::max(longest, start - written_until);
    written_until = std::max(written_until, end);
  }
  return longest;
}

}  // namespace

fencing_report check_fencing_log(fencing_log log, int min_zombie_refusals, int min_accepted_terms) {
  fencing_report report;
  for (const auto& problem : log.problems) report.violations.push_back(problem);
  std::map<std::uint64_t, std::int64_t> accepted_end_of_term;
  for (const auto& write : log.writes) {
    if (write.exit_code != 0) continue;
    auto [at, inserted] = accepted_end_of_term.emplace(write.term, write.end_us);
    if (!inserted) at->second = std::min(at->second, write.end_us);
  }
  report.accepted_terms = static_cast<int>(accepted_end_of_term.size());
  report.longest_unwritten_us = longest_unwritten(log.writes);
  if (report.accepted_terms < min_accepted_terms) {
    report.violations.push_back("accepted writes in only " + std::to_string(report.accepted_terms) +
                                " terms; wanted " + std::to_string(min_accepted_terms));
  }
  for (auto& write : log.writes) {
    term_tally& tally = report.per_term[write.term];
    if (write.exit_code == 0)
      ++tally.accepted;
    else if (write.exit_code == 10)
      ++tally.refused;
    else
      ++tally.failed;
    const std::int64_t newer_done = higher_than(accepted_end_of_term, write.term);
    // Its commit lies after its start: a start after the newer write completed orders them.
    if (write.exit_code == 0 && write.start_us > newer_done) {
      report.violations.push_back(
          "stale write accepted: " + write.node + " term " + std::to_string(write.term) +
          " started " + seconds_text(write.start_us) +
          ", after a higher term's write completed at " + seconds_text(newer_done));
    }
    write.zombie = in_zombie_interval(write, log.zombies);
    if (!write.zombie) continue;
    ++report.zombie_writes;
    if (write.exit_code == 10) ++report.zombie_refused;
  }
  if (report.zombie_refused < min_zombie_refusals) {
    report.violations.push_back("only " + std::to_string(report.zombie_refused) +
                                " zombie writes refused with exit 10 (" +
                                std::to_string(report.zombie_writes) + " zombie writes, " +
                                std::to_string(log.zombies.size()) + " zombies); wanted " +
                                std::to_string(min_zombie_refusals));
  }
  return report;
}

std::string format_fencing_report(const fencing_report& report) {
  std::ostringstream out;
  out << "fencing: writes per term (accepted / refused with exit 10 / failed otherwise)\n";
  for (const auto& [term, tally] : report.per_term) {
    out << "  term " << term << ": " << tally.accepted << " / " << tally.refused << " / "
        << tally.failed << "\n";
  }
  out << "fencing: terms with accepted writes " << report.accepted_terms
      << ", longest stretch without one " << report.longest_unwritten_us / 1000 << " ms\n";
  out << "fencing: zombie writes " << report.zombie_writes << ", refused with exit 10 "
      << report.zombie_refused << "\n";
  for (const auto& violation : report.violations) out << "VIOLATION " << violation << "\n";
  out << (report.ok() ? "fencing: PASS\n" : "fencing: FAIL\n");
  return out.str();
}

}  // namespace s3lect::chaos
