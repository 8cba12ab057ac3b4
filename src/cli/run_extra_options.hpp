// The options of `s3lect run` beyond the elector's and the store's: --print-config, the
// consul-lock ones (--timeout, --pass-stdin, --slots), --isolation and --allow-core-dumps.
#pragma once

#include "cli/options.hpp"

#include "guardian/job_launch.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// What these options ask for.
struct run_extras {
  /// Print the effective configuration and exit 0 instead of campaigning.
  bool print_config = false;
  /// Give up with exit_timeout when not elected within this long of the first campaign.
  std::optional<std::chrono::milliseconds> timeout;
  /// The command reads s3lect's stdin; without it, its stdin is /dev/null.
  bool pass_stdin = false;
  /// Up to this many leaders, one per slot key (KEY.slot-0 … KEY.slot-N-1); 0: one lock, KEY.
  unsigned slots = 0;
  /// --isolation: what must keep the job's processes together beyond its guardian; s3lect
  /// refuses to start without it. nullopt (auto): whatever this system allows.
  std::optional<guardian::isolation> isolation;
  /// --allow-core-dumps: leave the process dumpable (by default it is not, so that no core
  /// dump holds the credentials).
  bool allow_core_dumps = false;
};

/// The largest --slots: each slot is an elector, with its reads, on every node.
inline constexpr unsigned max_slots = 64;

/// Flag names of these options (no value).
const std::vector<std::string>& run_extra_flag_names();
/// Valued option names of these options.
const std::vector<std::string>& run_extra_valued_names();
/// Help text of these options.
const char* run_extra_options_help();

/// Reads these options. Returns nullopt and sets `error` to one line naming the option.
std::optional<run_extras> read_run_extras(const parsed_args& args, std::string& error);

/// The lock key of slot `slot`: "KEY.slot-N".
std::string slot_key(const std::string& key, unsigned slot);

}  // namespace s3lect::cli
