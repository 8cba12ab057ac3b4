// s3lect_chaos_checker: checks a chaos run's event log (tests/chaos/chaos.sh) for overlapping
// leaders, terms out of order or reused, and leaderless stretches longer than the documented
// bound. Exit 0: no violation and enough transitions; 1: violations or too few transitions;
// 2: bad usage or unreadable log. docs/chaos.md explains the rules.
#include "chaos_checker_core.hpp"
#include "fencing_checker_core.hpp"

#include <charconv>
#include <fstream>
#include <iostream>

namespace {

using std::chrono::milliseconds;

const char* usage =
    "usage: s3lect_chaos_checker [options] EVENTS_LOG\n"
    "  --lease MS --renew-deadline MS --frequent MS --infrequent MS --request-timeout MS\n"
    "  --retry-delays MS,MS,... --kill-grace MS   the nodes' timings (defaults: the chaos\n"
    "                                             harness's 2000 1400 300 600 250 50,100 200)\n"
    "  --slack MS             scheduling allowance in the liveness bound (default 1000)\n"
    "  --resume-tolerance MS  how long after SIGCONT, beyond the kill grace, a resumed\n"
    "                         node's stale command may run (default 1000)\n"
    "  --min-transitions N    fail with fewer transitions (default 0)\n"
    "  --fencing WRITES_LOG   check the fenced writes of chaos.sh --fencing (EVENTS_LOG may\n"
    "                         then be left out)\n"
    "  --min-zombie-refusals N  with --fencing: fail with fewer zombie writes refused with\n"
    "                         exit 10 (default 1)\n"
    "  --min-accepted-terms N   with --fencing: fail with accepted writes in fewer terms\n"
    "                         (default 2)\n";

milliseconds parse_ms(const std::string& option, const std::string& text) {
  long value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw std::invalid_argument(option + ": expected milliseconds, got '" + text + "'");
  }
  return milliseconds{value};
}

}  // namespace

/// The fencing check of a write log: 0 pass, 1 violations, 2 unreadable.
int check_fencing(const std::string& path, int min_zombie_refusals, int min_accepted_terms) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "s3lect_chaos_checker: cannot open " << path << "\n";
    return 2;
  }
  auto log = s3lect::chaos::parse_fencing_log(in);
  const auto report =
      s3lect::chaos::check_fencing_log(std::move(log), min_zombie_refusals, min_accepted_terms);
  std::cout << s3lect::chaos::format_fencing_report(report);
  return report.ok() ? 0 : 1;
}

int main(int argc, char** argv) {
  s3lect::chaos::checker_timings timings;
  std::size_t min_transitions = 0;
  std::string path;
  std::string fencing_path;
  int min_zombie_refusals = 1;
  int min_accepted_terms = 2;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::cout << usage;
        return 0;
      }
      if (arg.rfind("--", 0) != 0) {
        if (!path.empty()) throw std::invalid_argument("one log only");
        path = arg;
        continue;
      }
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--lease") {
        timings.lease = parse_ms(arg, value);
      } else if (arg == "--renew-deadline") {
        timings.renew_deadline = parse_ms(arg, value);
      } else if (arg == "--frequent") {
        timings.frequent = parse_ms(arg, value);
      } else if (arg == "--infrequent") {
        timings.infrequent = parse_ms(arg, value);
      } else if (arg == "--request-timeout") {
        timings.request_timeout = parse_ms(arg, value);
      } else if (arg == "--kill-grace") {
        timings.kill_grace = parse_ms(arg, value);
      } else if (arg == "--slack") {
        timings.slack = parse_ms(arg, value);
      } else if (arg == "--resume-tolerance") {
        timings.resume_tolerance = parse_ms(arg, value);
      } else if (arg == "--retry-delays") {
        timings.retry_delays.clear();
        std::size_t from = 0;
        while (from <= value.size() && value != "none") {
          const auto comma = value.find(',', from);
          timings.retry_delays.push_back(parse_ms(arg, value.substr(from, comma - from)));
          if (comma == std::string::npos) break;
          from = comma + 1;
        }
      } else if (arg == "--fencing") {
        fencing_path = value;
      } else if (arg == "--min-zombie-refusals") {
        min_zombie_refusals = static_cast<int>(parse_ms(arg, value).count());
      } else if (arg == "--min-accepted-terms") {
        min_accepted_terms = static_cast<int>(parse_ms(arg, value).count());
      } else if (arg == "--min-transitions") {
        min_transitions = static_cast<std::size_t>(parse_ms(arg, value).count());
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    }
    if (path.empty() && fencing_path.empty()) throw std::invalid_argument("missing EVENTS_LOG");
  } catch (const std::exception& e) {
    std::cerr << "s3lect_chaos_checker: " << e.what() << "\n" << usage;
    return 2;
  }
  if (!fencing_path.empty()) {
    const int fencing_status = check_fencing(fencing_path, min_zombie_refusals, min_accepted_terms);
    if (path.empty() || fencing_status != 0) return fencing_status;
  }
  std::ifstream in(path);
  if (!in) {
    std::cerr << "s3lect_chaos_checker: cannot open " << path << "\n";
    return 2;
  }
  const auto log = s3lect::chaos::parse_chaos_log(in);
  const auto report = s3lect::chaos::check_chaos_log(log, timings);
  std::cout << s3lect::chaos::format_report(report, log);
  if (report.transitions() < min_transitions) {
    std::cout << "too few transitions: " << report.transitions() << " < " << min_transitions
              << "\n";
    return 1;
  }
  return report.violations.empty() ? 0 : 1;
}
