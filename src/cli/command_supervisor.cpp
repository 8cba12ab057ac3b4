#include "cli/command_supervisor.hpp"

#include "cli/exit_codes.hpp"

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

std::string ms_since(steady::time_point start) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count());
}

namespace {

/// The exit status for a command that could not be started, as shells report it.
int spawn_failure_status(const error_code& error) {
  if (error.value() == ENOENT) return exit_not_found;
  if (error.value() == EACCES || error.value() == ENOEXEC || error.value() == EPERM) {
    return exit_not_executable;
  }
  return exit_failure;
}

std::unique_ptr<child_process> start_command(supervisor& s, std::uint64_t term,
                                             asio::any_io_executor executor, error_code& error) {
  spawn_request request = s.command;
  request.environment = {{"S3LECT_TERM", std::to_string(term)},
                         {"S3LECT_LEADER_ID", s.options.elector.config.server_id},
                         {"S3LECT_LOCK", s.options.store.url()}};
  if (s.slot) {
    request.environment.back().second = slot_key(s.options.store.url(), *s.slot);
    request.environment.emplace_back("S3LECT_SLOT", std::to_string(*s.slot));
  }
  return child_process::spawn(std::move(executor), request, error);
}

}  // namespace

std::unique_ptr<child_process> start_command_if_leading(supervisor& s,
                                                        const leadership_lease& lease,
                                                        asio::any_io_executor executor,
                                                        error_code& error) {
  // The elected notice was queued behind other work: a renewal may have failed meanwhile, and a
  // command started now would work without a lease (and with a term a successor has passed).
  const leadership_status now = s.election.status();
  if (!now.is_leader || now.term != lease.term) {
    error = errc::not_leader;
    return nullptr;
  }
  return start_command(s, lease.term, std::move(executor), error);
}

namespace {

void forward_signal(supervisor& s, int signal) {
  s.child->signal_group(signal);
  s.log.log(log_level::info, "forwarded signal", {{"signal", signal_name(signal)}});
}

/// Waits for the command to exit after `first_signal`: SIGKILL when the grace timer fires or a
/// second stop request comes; other signals are passed on. Returns its exit status and whether
/// it had to be killed.
asio::awaitable<std::pair<int, bool>> await_stopped_command(supervisor& s, int first_signal) {
  asio::steady_timer grace_timer(co_await asio::this_coro::executor);
  grace_timer.expires_after(s.options.kill_grace);
  bool killed = first_signal == SIGKILL;
  while (!killed) {
    auto event =
        co_await (s.child->async_wait_exit() || grace_timer.async_wait(asio::use_awaitable) ||
                  s.signals.async_wait(asio::use_awaitable));
    if (event.index() == 0) co_return std::make_pair(std::get<0>(event), false);
    std::string kill_reason = "grace_expired";
    if (event.index() == 2) {
      const int signal = std::get<2>(event);
      if (!is_stop_signal(signal)) {
        forward_signal(s, signal);
        continue;
      }
      if (!s.shutdown_requested) {
        s.shutdown_requested = true;
        s.log.log(log_level::info, "stop requested, waiting for the command",
                  {{"signal", signal_name(signal)}});
        continue;
      }
      kill_reason = "second_stop_signal";
    }
    s.log.log(
        log_level::warning, "killing command",
        {{"pid", std::to_string(s.child->pid())}, {"signal", "SIGKILL"}, {"reason", kill_reason}});
    s.child->signal_group(SIGKILL);
    killed = true;
  }
  const int status = co_await s.child->async_wait_exit();
  co_return std::make_pair(status, true);
}

/// Stops the running command: SIGTERM to its group, SIGKILL after the kill grace, or at once on
/// a second stop request. Returns when it has exited and been reaped.
asio::awaitable<void> stop_command(supervisor& s, std::string reason) {
  if (!s.child) co_return;
  const pid_t pid = s.child->pid();
  const std::chrono::milliseconds grace = s.options.kill_grace;
  const auto started = steady::now();
  const int first_signal = grace.count() == 0 ? SIGKILL : SIGTERM;
  s.log.log(log_level::info, "stopping command",
            {{"pid", std::to_string(pid)},
             {"signal", signal_name(first_signal)},
             {"grace_ms", std::to_string(grace.count())},
             {"reason", reason}});
  s.child->signal_group(first_signal);
  const auto [status, killed] = co_await await_stopped_command(s, first_signal);
  s.log.log(log_level::info, "command stopped",
            {{"pid", std::to_string(pid)},
             {"status", std::to_string(status)},
             {"killed", killed ? "true" : "false"},
             {"stop_ms", ms_since(started)}});
  s.child.reset();
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
    auto elected = co_await (s.election.async_wait_for_leadership(token) ||
                             s.signals.async_wait(asio::use_awaitable) ||
                             give_up.async_wait(asio::use_awaitable));
    if (elected.index() == 2) {
      s.log.log(log_level::warning, "not elected in time: giving up",
                {{"waited_ms", ms_since(campaign_started)}});
      co_await release_lock(s);
      co_return exit_timeout;
    }
    if (elected.index() == 1) {
      const int signal = std::get<1>(elected);
      if (!is_stop_signal(signal)) {
        s.log.log(log_level::info, "signal ignored: no command running",
                  {{"signal", signal_name(signal)}});
        continue;
      }
      s.log.log(log_level::info, "stopping", {{"signal", signal_name(signal)}});
      co_await release_lock(s);
      co_return exit_ok;
    }
    auto [wait_error, lease] = std::get<0>(elected);
    if (wait_error) {
      s.log.log(log_level::error, "election ended unexpectedly", {{"error", wait_error.message()}});
      co_return exit_failure;
    }
    s.log.log(log_level::info, "became leader",
              {{"term", std::to_string(lease.term)}, {"after_ms", ms_since(campaign_started)}});
    s.give_up_at.reset();
    co_return lease;
  }
}

/// The command exited by itself: the lock is released so that a follower takes over at once,
/// and s3lect exits with the command's status.
asio::awaitable<int> finish_after_exit(supervisor& s, const leadership_lease& lease, int status) {
  s.log.log(log_level::info, "command exited",
            {{"pid", std::to_string(s.child->pid())},
             {"status", std::to_string(status)},
             {"term", std::to_string(lease.term)}});
  s.child.reset();
  s.log.log(log_level::info, "releasing the lock", {{"term", std::to_string(lease.term)}});
  co_await release_lock(s);
  co_return status;
}

/// A stop signal while leading: the command is stopped, then the lock released.
asio::awaitable<int> stop_and_release(supervisor& s, const leadership_lease& lease, int signal) {
  s.log.log(log_level::info, "stopping", {{"signal", signal_name(signal)}});
  s.shutdown_requested = true;
  co_await stop_command(s, "stop_signal");
  s.log.log(log_level::info, "releasing the lock", {{"term", std::to_string(lease.term)}});
  co_await release_lock(s);
  co_return exit_ok;
}

}  // namespace

asio::awaitable<std::optional<int>> lead(supervisor& s, leadership_lease lease) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  const auto executor = co_await asio::this_coro::executor;
  error_code spawn_error;
  s.child = start_command_if_leading(s, lease, executor, spawn_error);
  if (!s.child && spawn_error == errc::not_leader) {
    s.log.log(log_level::warning, "lost leadership before the command started",
              {{"term", std::to_string(lease.term)}});
    co_return std::nullopt;
  }
  if (!s.child) {
    s.log.log(log_level::error, "cannot start the command",
              {{"command", s.command.path}, {"error", spawn_error.message()}});
    co_await release_lock(s);
    co_return spawn_failure_status(spawn_error);
  }
  s.log.log(log_level::info, "command started",
            {{"pid", std::to_string(s.child->pid())}, {"term", std::to_string(lease.term)}});
  const auto leader_since = steady::now();
  for (;;) {
    auto event =
        co_await (s.child->async_wait_exit() || s.election.async_wait_for_loss(lease, token) ||
                  s.signals.async_wait(asio::use_awaitable));
    if (event.index() == 0) {
      const int status = co_await finish_after_exit(s, lease, std::get<0>(event));
      co_return status;
    }
    if (event.index() == 1) break;
    const int signal = std::get<2>(event);
    if (!is_stop_signal(signal)) {
      forward_signal(s, signal);
      continue;
    }
    const int code = co_await stop_and_release(s, lease, signal);
    co_return code;
  }
  s.log.log(log_level::warning, "lost leadership",
            {{"term", std::to_string(lease.term)}, {"held_ms", ms_since(leader_since)}});
  co_await stop_command(s, "leadership_lost");
  if (!s.shutdown_requested) co_return std::nullopt;
  co_await release_lock(s);
  co_return exit_ok;
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
