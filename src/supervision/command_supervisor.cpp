#include "supervision/command_supervisor.hpp"

#include "cli/exit_codes.hpp"
#include "supervision/job_guardian.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

#include <algorithm>
#include <optional>
#include <variant>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

bool is_stop_signal(int signal) {
  return signal == SIGINT || signal == SIGTERM;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGKILL:
      return "SIGKILL";
    default:
      return "signal " + std::to_string(signal);
  }
}

void pass_on(supervisor& s, int signal) {
  if (s.job) {
    s.job->send(guardian::forward_signal{signal});
    s.log.log(log_level::info, "forwarded signal", {{"signal", signal_name(signal)}});
  } else {
    s.log.log(log_level::info, "signal ignored: no command running",
              {{"signal", signal_name(signal)}});
  }
}

std::optional<int> take_signals(supervisor& s) {
  std::optional<int> stop;
  while (const auto signal = s.signals.take()) {
    if (!is_stop_signal(*signal)) {
      pass_on(s, *signal);
    } else if (!stop) {
      stop = *signal;
    }
  }
  return stop;
}

std::int64_t ms_since(steady::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
}

namespace {

/// s3lect's exit code for a command that could not be started: as shells report a failed exec,
/// or an internal failure when the guardian could not set the job up.
int start_failure_status(const std::string& step, const error_code& error) {
  if (step != "exec") return exit_failure;
  if (error.value() == ENOENT) return exit_not_found;
  if (error.value() == EACCES || error.value() == ENOEXEC || error.value() == EPERM) {
    return exit_not_executable;
  }
  return exit_failure;
}

/// Stops the elector, releasing the lock if held.
asio::awaitable<void> release_lock(supervisor& s) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  co_await s.election.async_stop(token);
  s.log.log(log_level::info, "stopped campaigning");
}

/// Waits to be elected. Signals other than stop signals are logged and ignored: there is no
/// command to pass them to. Returns the lease, or s3lect's exit code when it must end first
/// (a stop signal, or --timeout).
asio::awaitable<std::variant<leadership_lease, int>> await_election(
    supervisor& s, steady::time_point campaign_started) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  asio::steady_timer give_up(co_await asio::this_coro::executor);
  give_up.expires_at(s.give_up_at.value_or(steady::time_point::max()));
  for (;;) {
    auto elected = co_await (s.election.async_wait_for_leadership(token) || s.signals.wait() ||
                             give_up.async_wait(asio::use_awaitable));
    // A stop signal counts even when the election completed in the same turn: the lock just won
    // is then released without starting the command.
    if (const auto signal = take_signals(s)) {
      s.log.log(log_level::info, "stopping", {{"signal", signal_name(*signal)}});
      co_await release_lock(s);
      co_return exit_ok;
    }
    if (elected.index() == 1) continue;
    if (elected.index() == 2) {
      s.log.log(log_level::warning, "not elected in time: giving up",
                {{"waited_ms", ms_since(campaign_started)}});
      co_await release_lock(s);
      co_return exit_timeout;
    }
    auto [wait_error, lease] = std::get<0>(elected);
    if (wait_error) {
      s.log.log(log_level::error, "election ended unexpectedly", {{"error", wait_error.message()}});
      co_return exit_failure;
    }
    s.log.log(log_level::info, "became leader",
              {{"term", lease.term}, {"after_ms", ms_since(campaign_started)}});
    s.give_up_at.reset();
    co_return lease;
  }
}

/// The command exited by itself: the lock is released so that a follower takes over at once,
/// and s3lect exits with the command's status. The guardian stays until the lock is released,
/// so that it still releases it should s3lect die meanwhile.
asio::awaitable<int> finish_after_exit(supervisor& s, const leadership_lease& lease, job_end end) {
  s.log.log(log_level::info, "command exited",
            {{"pid", s.started.pid},
             {"status", end.status},
             {"term", lease.term},
             {"leftovers_killed", end.leftovers}});
  s.log.log(log_level::info, "releasing the lock", {{"term", lease.term}});
  co_await release_lock(s);
  co_await retire_guardian(s);
  co_return end.status;
}

/// A stop signal while leading: the command is stopped, then the lock released.
asio::awaitable<int> stop_and_release(supervisor& s, const leadership_lease& lease, int signal) {
  s.log.log(log_level::info, "stopping", {{"signal", signal_name(signal)}});
  const job_end end = co_await stop_job(s, "stop_signal");
  if (!end.tree_gone) co_return exit_failure;  // Not released: processes of it may still run.
  s.log.log(log_level::info, "releasing the lock", {{"term", lease.term}});
  co_await release_lock(s);
  co_await retire_guardian(s);
  co_return exit_ok;
}

/// The guardian stopped the command by itself: s3lect did not confirm the leadership before the
/// deadline it last gave (it was stopped, or its event loop was stuck). A leadership that
/// still holds is given up, since its command is gone; then s3lect campaigns again.
asio::awaitable<std::optional<int>> after_deadline_stop(supervisor& s,
                                                        const leadership_lease& lease,
                                                        job_end end) {
  s.log.log(log_level::warning,
            "the guardian stopped the command: the leadership was not confirmed in time",
            {{"pid", s.started.pid}, {"status", end.status}, {"term", lease.term}});
  co_await retire_guardian(s);
  const leadership_status now = s.election.status();
  if (s.shutdown_requested) {
    co_await release_lock(s);
    co_return exit_ok;
  }
  if (now.is_leader && now.term == lease.term) {
    s.log.log(log_level::info, "resigning: the command of this leadership is gone",
              {{"term", lease.term}});
    co_await s.election.async_resign(asio::as_tuple(asio::use_awaitable));
  }
  co_return std::nullopt;
}

/// The guardian died while the command ran (not s3lect's doing). The lock is released only when
/// nothing of the job can be left; either way s3lect ends.
asio::awaitable<int> after_guardian_lost(supervisor& s) {
  const job_end end = co_await guardian_lost(s);
  if (end.tree_gone) {
    co_await release_lock(s);
  } else {
    s.log.log(log_level::error,
              "not releasing the lock: followers take over once the lease has run out");
  }
  co_return exit_failure;
}

/// What ended the command while it ran: its own exit, the guardian's deadline, or the guardian's
/// death. Returns s3lect's exit code, or nullopt to campaign again; or nothing when `message`
/// reports no end.
asio::awaitable<std::optional<std::optional<int>>> on_guardian_message(
    supervisor& s, const leadership_lease& lease,
    const std::optional<guardian::from_guardian>& message) {
  if (!message) co_return co_await after_guardian_lost(s);
  const auto end = end_reported(message);
  if (!end) co_return std::nullopt;
  if (end->cause == guardian::end_cause::deadline) {
    co_return co_await after_deadline_stop(s, lease, *end);
  }
  co_return co_await finish_after_exit(s, lease, *end);
}

/// Leadership was lost while the command ran: it is stopped; s3lect campaigns again, or exits
/// when a stop signal came meanwhile.
asio::awaitable<std::optional<int>> after_loss(supervisor& s, const leadership_lease& lease,
                                               steady::time_point leader_since) {
  s.log.log(log_level::warning, "lost leadership",
            {{"term", lease.term}, {"held_ms", ms_since(leader_since)}});
  const job_end end = co_await stop_job(s, "leadership_lost");
  co_await retire_guardian(s);
  if (!end.tree_gone) co_return exit_failure;
  if (!s.shutdown_requested) co_return std::nullopt;
  co_await release_lock(s);
  co_return exit_ok;
}

/// The elector's advice to hand `lease` over (preemption), as (error, successor).
asio::awaitable<std::tuple<error_code, std::string>> advice(supervisor& s,
                                                            const leadership_lease& lease) {
  co_return co_await s.election.async_wait_for_handover_advice(lease,
                                                               asio::as_tuple(asio::use_awaitable));
}

/// Preemption (docs/coordination.md#preemption): a verified candidate of higher priority has
/// settled. As on SIGTERM, the command is stopped before the lock is released, here naming that
/// candidate; then s3lect follows again, or exits if a stop signal came meanwhile.
asio::awaitable<std::optional<int>> after_handover_advice(supervisor& s,
                                                          const leadership_lease& lease,
                                                          const std::string& successor) {
  s.log.log(log_level::info, "handing over to a higher-priority candidate",
            {{"term", lease.term}, {"successor", successor}});
  const job_end end = co_await stop_job(s, "preempted");
  if (!end.tree_gone) co_return exit_failure;  // Not released: processes of it may still run.
  if (s.shutdown_requested) {
    co_await release_lock(s);
    co_await retire_guardian(s);
    co_return exit_ok;
  }
  const auto [resigned] =
      co_await s.election.async_resign_to(successor, asio::as_tuple(asio::use_awaitable));
  if (resigned == errc::unknown_successor) {
    // The candidate went away while the command stopped: release to the best one left, since
    // the command is stopped already and this node must not keep a leadership it does not use.
    co_await s.election.async_resign(asio::as_tuple(asio::use_awaitable));
  }
  co_await retire_guardian(s);
  co_return std::nullopt;
}

}  // namespace

asio::awaitable<std::optional<int>> lead(supervisor& s, leadership_lease lease) {
  std::string step;
  const error_code start_error = co_await start_job(s, lease, step);
  if (start_error == errc::not_leader) {
    s.log.log(log_level::warning, "lost leadership before the command started",
              {{"term", lease.term}});
    co_return std::nullopt;
  }
  if (start_error) {
    s.log.log(log_level::error, "cannot start the command",
              {{"command", s.command.path}, {"step", step}, {"error", start_error.message()}});
    if (s.tree_left_running) {
      s.log.log(log_level::error,
                "not releasing the lock: followers take over once the lease has run out");
      co_return exit_failure;
    }
    co_await release_lock(s);
    co_return start_failure_status(step, start_error);
  }
  s.log.log(log_level::info, "command started",
            {{"pid", s.started.pid},
             {"term", lease.term},
             {"guardian", s.job->pid()},
             {"isolation", s.started.isolation}});
  const auto leader_since = steady::now();
  for (;;) {
    auto event = co_await (s.job->async_wait_message() || confirm_until_lost(s, lease) ||
                           s.signals.wait() || advice(s, lease));
    // Signals first, whatever else completed in the same turn: other signals go to the command,
    // and a stop signal makes whatever ends this leadership end s3lect too.
    const auto stop = take_signals(s);
    if (stop) s.shutdown_requested = true;
    // Then the guardian's message, also whatever else completed: it may report the job's end,
    // which the guardian never says twice.
    if (s.job->message_ready()) {
      const auto message = s.job->take();
      auto code = co_await on_guardian_message(s, lease, message);
      if (code) co_return *code;
    } else if (event.index() == 1) {
      co_return co_await after_loss(s, lease, leader_since);
    } else if (event.index() == 3 && !stop) {
      // The advice's error means this leadership is over, as the loss wait would say.
      auto [advice_error, successor] = std::get<3>(event);
      if (advice_error) co_return co_await after_loss(s, lease, leader_since);
      co_return co_await after_handover_advice(s, lease, successor);
    }
    if (stop) co_return co_await stop_and_release(s, lease, *stop);
  }
}

namespace {

/// The leader's side: campaigns, and runs the command while leader. Returns s3lect's exit code.
asio::awaitable<int> supervise(supervisor& s) {
  for (;;) {
    const auto campaign_started = steady::now();
    auto elected = co_await await_election(s, campaign_started);
    if (elected.index() == 1) co_return std::get<1>(elected);
    const leadership_lease lease = std::get<0>(elected);
    const std::optional<int> code = co_await lead(s, lease);
    if (code) co_return *code;
  }
}

}  // namespace

asio::awaitable<void> stop_servers(supervisor& s) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  if (s.peer_server) {
    co_await s.peer_server->async_stop(token);
    s.log.log(log_level::info, "peer health server stopped");
  }
  if (s.metrics) {
    co_await s.metrics->async_stop(token);
    s.log.log(log_level::info, "metrics server stopped");
  }
}

steady::duration time_left(steady::time_point give_up_at) {
  return std::max(give_up_at - steady::now(), steady::duration::zero());
}

asio::awaitable<int> supervise_and_stop(supervisor& s) {
  const int code = co_await supervise(s);
  co_await stop_servers(s);
  co_return code;
}

}  // namespace s3lect::cli
