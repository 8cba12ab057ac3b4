// The fencing checker's logic without I/O (docs/chaos.md, "Fencing mode"): parses the write log
// that chaos.sh's fenced writers and driver append to, and checks that no write with a lower
// term was accepted after a higher term's accepted write completed, and that zombies (commands
// whose s3lect was frozen) were refused with exit 10.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace s3lect::chaos {

/// One `s3lect put` as its writer logged it: `write NODE TERM START END EXIT` (times in seconds
/// since the epoch with microseconds, as $EPOCHREALTIME).
struct fenced_write_record {
  std::string node;
  std::uint64_t term = 0;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  int exit_code = 0;    ///< 0 accepted, 10 fenced out, anything else failed.
  bool zombie = false;  ///< Started while its node's s3lect was frozen (set by the check).
};

/// A frozen supervisor: `zombie NODE SINCE UNTIL` from the driver.
struct zombie_interval {
  std::string node;
  std::int64_t since_us = 0;
  std::int64_t until_us = 0;
};

/// The parsed write log; unparsable lines are kept as problems.
struct fencing_log {
  std::vector<fenced_write_record> writes;
  std::vector<zombie_interval> zombies;
  std::vector<std::string> problems;
};

/// Writes of one term by outcome.
struct term_tally {
  int accepted = 0;
  int refused = 0;
  int failed = 0;
};

/// What the check found.
struct fencing_report {
  std::map<std::uint64_t, term_tally> per_term;
  int zombie_writes = 0;
  int zombie_refused = 0;  ///< Zombie writes refused with exit 10.
  int accepted_terms = 0;  ///< Terms with at least one accepted write.
  /// The longest stretch between two accepted writes (end of one to start of the next), in µs.
  std::int64_t longest_unwritten_us = 0;
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
};

/// Parses the log; lines starting with `#` and blank lines are skipped.
fencing_log parse_fencing_log(std::istream& in);

/// Checks the rules; `min_zombie_refusals` zombie writes refused with exit 10 are required, and
/// accepted writes in `min_accepted_terms` terms (leadership moved, and each new leader's
/// command got its writes through: the liveness evidence of this mode, whose commands log no
/// start and end records).
fencing_report check_fencing_log(fencing_log log, int min_zombie_refusals,
                                 int min_accepted_terms = 0);

/// The report as text: a line per term, the zombie counts, each violation.
std::string format_fencing_report(const fencing_report& report);

}  // namespace s3lect::chaos
