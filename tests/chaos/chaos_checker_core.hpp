// The chaos checker's logic without I/O: parses the event log that tests/chaos/chaos.sh and its
// child command write, and checks safety and liveness rules on it (docs/chaos.md, "The
// checker's rules").
#pragma once

#include <chrono>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::chaos {

/// Microseconds since the Unix epoch, as bash's $EPOCHREALTIME gives them.
using micros = std::int64_t;

/// The timings the nodes ran with, and the checker's tolerances.
struct checker_timings {
  std::chrono::milliseconds lease{2000};
  std::chrono::milliseconds renew_deadline{1400};
  std::chrono::milliseconds frequent{300};
  std::chrono::milliseconds infrequent{600};
  std::chrono::milliseconds request_timeout{250};
  std::vector<std::chrono::milliseconds> retry_delays{std::chrono::milliseconds{50},
                                                      std::chrono::milliseconds{100}};
  std::chrono::milliseconds kill_grace{200};
  /// Scheduling allowance added to the liveness bound (process start, a loaded machine).
  std::chrono::milliseconds slack{1000};
  /// How long after a SIGCONT a resumed node's stale command may still run (beyond kill_grace).
  std::chrono::milliseconds resume_tolerance{1000};

  /// Worst case of one operation with all its retries: attempts x timeout + delays.
  micros retry_schedule() const;
  /// B: how long after the end of every fault a leader must exist again.
  micros liveness_bound() const;
  /// R: how long after a SIGCONT a stopped leader's command may overlap a newer leader.
  micros resume_window() const;
};

/// One line of the log, kept for evidence.
struct log_line {
  int number = 0;
  std::string text;
};

/// One run of the child command: one leadership as the command saw it. With a tree watcher, the
/// run is the command's whole process tree (grandchildren and setsid daemons included), from
/// the command's start to the watcher's record that the last of them was gone.
struct child_run {
  std::string node;
  std::uint64_t term = 0;
  long pid = 0;
  micros start = 0;
  micros end = 0;          ///< Valid after parse: the tree's end, or inferred (see end_source).
  std::string end_source;  ///< "treeend", "end", "kill", "exit", "reaped" or "finish" (never).
  log_line start_line;
  log_line end_line;          ///< the record end is taken from
  log_line command_end_line;  ///< the command's own `end` record, if it wrote one
};

struct interval_event {
  std::string kind;    ///< fault kind: stop, freeze, kill, term, blackhole, drop, reset, latency…
  std::string target;  ///< node name or "all"
  micros from = 0;
  micros to = 0;
  log_line line;
  std::string detail;  ///< the fault record's words after T1 (`s3lect-only` for a lone kill)
};

/// A job's try at its guardian's descriptors (s3lect_channel_thief, docs/chaos.md).
struct theft {
  std::string node;
  std::uint64_t term = 0;
  micros at = 0;
  unsigned taken = 0;  ///< descriptors taken: any is a violation
  log_line line;
};

/// A claim flood's summary (s3lect_claim_forger, chaos.sh --claim-flood): forged candidate
/// claims sent to whichever node led, and how often a record or an answer named a forged id.
struct claim_flood {
  micros at = 0;          ///< when the forger stopped
  std::string id_prefix;  ///< every forged id starts with it
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;  ///< checks a node answered (200 or 404)
  std::uint64_t named = 0;     ///< records naming a forged id as leader, successor or candidate
  log_line line;
};

struct chaos_log {
  std::vector<child_run> children;      ///< in order of start
  std::vector<theft> thefts;            ///< the jobs' tries at their guardian's descriptors
  std::vector<claim_flood> floods;      ///< claim floods that ran beside the nodes
  std::vector<interval_event> stops;    ///< every process of a node stopped (the machine froze)
  std::vector<interval_event> freezes;  ///< a node's s3lect alone stopped, its job running on
  std::vector<interval_event> faults;   ///< every fault, stops and freezes included
  micros begin = 0;
  micros finish = 0;
  std::vector<std::string> errors;  ///< malformed lines, commands that never ended
  std::size_t aborted_starts = 0;   ///< end records without a start (stopped at once)
  bool trees_watched = false;       ///< a `treewatch` record: every command needs a `treeend`
  /// When each node's s3lect was started again (the end of a kill or term fault, an exit): a
  /// job started before belongs to an earlier s3lect.
  std::map<std::string, std::vector<micros>> restarts;
  std::size_t unmatched_tree_ends = 0;  ///< trees of commands killed before their start record
};

/// Parses the log. Record formats (times are seconds with a fraction, e.g. 1700000000.123456):
///   begin T | finish T
///   start NODE TERM T PID        the command started (written by the command itself)
///   end NODE TERM T PID          the command is stopping (its SIGTERM trap)
///   treewatch ADDR               a tree watcher ran: every command's tree has a treeend
///   treeend NODE TERM PID T      the last process of that command's tree was gone by T
///   kill NODE T                  the node was SIGKILLed; all its processes were gone by T
///   exit NODE T STATUS           the node's s3lect exited by itself, seen gone at T
///   reaped NODE PID T            s3lect reaped PID (after SIGKILL) by T
///   stop NODE T0 T1              every process of the node was stopped during [T0, T1]
///   freeze NODE T0 T1            the node's s3lect alone was stopped during [T0, T1]
///   fault KIND TARGET T0 T1 ...  a fault was in effect during [T0, T1]
///   thief NODE TERM T TAKEN      the command tried to take its guardian's descriptors from
///                                the processes it can see, and took TAKEN of them
///   claimflood T PREFIX SENT ANSWERED NAMED
///                                a claim forger, stopped at T, sent SENT forged claims (ids
///                                starting with PREFIX), ANSWERED were answered, and NAMED
///                                records or answers named a forged id
/// A command ends at its tree's treeend. Without one (no watcher), at its `end`, else at the
/// earliest later kill, exit or reaped record of its node (or pid), else at finish (and that is
/// an error). With a watcher, a command without treeend is an error too. A time more than a
/// second outside [begin, finish] is an error: it came from a clock other than the run's.
chaos_log parse_chaos_log(std::istream& in);

struct violation {
  std::string rule;  ///< overlap, term_order, term_reuse, liveness, theft, claim_flood, log
  std::string message;
  std::vector<log_line> evidence;
};

/// What became of the job of a node whose s3lect alone was frozen or SIGKILLed while the job ran.
struct lone_fault {
  std::string kind;  ///< "freeze" or "kill"
  std::string node;
  micros at = 0;               ///< when the fault began
  micros duration = 0;         ///< how long s3lect stayed frozen (0 for a kill)
  micros tree_gone_after = 0;  ///< from the fault's start to the job's tree's end
  bool outlived = false;       ///< the tree was still there after the freeze ended
  log_line line;
};

struct chaos_report {
  std::size_t leaderships = 0;
  std::map<std::string, std::size_t> faults_by_kind;
  std::vector<violation> violations;
  micros max_gap = 0;  ///< longest stretch without a running command
  micros max_gap_from = 0;
  micros max_excess = 0;  ///< longest stretch without a leader that no fault window explains
  std::size_t excused_overlaps = 0;  ///< overlaps inside a resumed node's window
  micros max_excused_overlap = 0;
  std::size_t stale_starts = 0;  ///< commands a resumed node started with an outdated term
  /// Commands a node started again under its own term, right after its previous command under
  /// it and before any other command (it took its own record back: rule 2's second exception).
  std::size_t resumed_terms = 0;
  /// The closest call: the shortest time from one command's end to the next command's start
  /// on another node (handovers that overlapped are reported as overlaps instead).
  std::optional<micros> min_separation;
  std::size_t thefts_tried = 0;         ///< thief records
  std::uint64_t forged_claims = 0;      ///< claims the floods sent
  std::uint64_t forged_answered = 0;    ///< of those, answered by a node
  std::size_t lone_freezes = 0;         ///< freeze records: s3lect alone stopped
  std::size_t lone_kills = 0;           ///< kill faults of s3lect alone (detail `s3lect-only`)
  std::vector<lone_fault> lone_faults;  ///< those that hit a node while its job ran
  micros liveness_bound = 0;
  micros resume_window = 0;
  micros duration = 0;

  std::size_t transitions() const { return leaderships == 0 ? 0 : leaderships - 1; }
};

/// Checks every rule.
chaos_report check_chaos_log(const chaos_log& log, const checker_timings& timings);

/// The human-readable report the checker prints.
std::string format_report(const chaos_report& report, const chaos_log& log);

}  // namespace s3lect::chaos
