// The leader's side of `s3lect run`: starts the command (under its guardian, cli/job_guardian)
// when elected, stops it when leadership is lost or a stop signal comes, passes other signals
// on to it, and releases the lock.
#pragma once

#include "cli/log_output.hpp"
#include "cli/run_options.hpp"
#include "cli/signal_inbox.hpp"
#include "supervision/child_process.hpp"
#include "supervision/guardian_process.hpp"

#include <s3lect/elector.hpp>
#include <s3lect/health.hpp>
#include <s3lect/metrics_server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace s3lect::cli {

/// How `s3lect run` runs its jobs: under this guardian executable, with this isolation (what
/// the system allowed, or what --isolation required, found at start-up).
struct job_settings {
  std::string guardian_path;
  guardian::isolation level;
};

/// The state `s3lect run` works on, shared by its coroutines on one io_context.
struct supervisor {
  elector& election;
  const log_output& log;  ///< Lines about this lock (with --slots, lock=KEY.slot-N).
  const run_options& options;
  spawn_request command;  ///< Without the per-leadership environment.
  signal_inbox& signals;
  job_settings jobs;
  /// The guardian of the running job, and what it said when the command started.
  std::unique_ptr<guardian_process> job{};
  guardian::job_started started{};
  /// The last "leading until" sent to the job's guardian (CLOCK_BOOTTIME ns).
  std::int64_t confirmed_until = 0;
  bool shutdown_requested = false;
  /// The guardian did not answer and was killed without every process of the job's tree
  /// known gone: nothing may be released (followers wait for the lease to run out).
  bool tree_left_running = false;
  health_server* peer_server = nullptr;  ///< Peer mode only.
  metrics_server* metrics = nullptr;     ///< With --metrics-listen only.
  /// With --slots: the slot `election` campaigns for (S3LECT_SLOT, and its key in S3LECT_LOCK).
  std::optional<unsigned> slot{};
  /// Lines about the whole node (lock=KEY), such as stopping; `log` when not set.
  const log_output* node_log = nullptr;
  /// With --timeout: not elected by then, s3lect stops campaigning and exits exit_timeout.
  /// Cleared once elected: the timeout bounds the wait for the first leadership only.
  std::optional<std::chrono::steady_clock::time_point> give_up_at{};
};

/// Runs the command for one leadership `lease` of `s.election`. Returns s3lect's exit code, or
/// nullopt when leadership was lost and s3lect campaigns again.
boost::asio::awaitable<std::optional<int>> lead(supervisor& s, leadership_lease lease);

/// Stops the servers once the electors have stopped: the health server answers pending watches
/// with the released state (a follower takes over at once), then closes.
boost::asio::awaitable<void> stop_servers(supervisor& s);

/// The time left until `give_up_at`, for a timer (zero once passed).
std::chrono::steady_clock::duration time_left(std::chrono::steady_clock::time_point give_up_at);

/// Campaigns and runs the command while leader until s3lect must exit, then stops the servers:
/// the health server answers pending watches with the released state (a follower takes over at
/// once), then closes. Returns s3lect's exit code.
boost::asio::awaitable<int> supervise_and_stop(supervisor& s);

/// SIGINT and SIGTERM stop s3lect; the other signals it catches go to the command.
bool is_stop_signal(int signal);

/// Passes a signal that is not a stop signal on to the job's command, or logs it as ignored
/// when no command runs.
void pass_on(supervisor& s, int signal);

/// Takes every pending signal: returns the first stop signal, passes the others on.
std::optional<int> take_signals(supervisor& s);

/// "SIGTERM", or "signal N" for one without a name here, for the log.
std::string signal_name(int signal);

/// Milliseconds from `start` to now, for the log.
std::int64_t ms_since(std::chrono::steady_clock::time_point start);

}  // namespace s3lect::cli
