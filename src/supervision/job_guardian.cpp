#include "supervision/job_guardian.hpp"

#include "guardian/guardian.hpp"
#include "guardian/job_cgroup.hpp"

#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

#include <algorithm>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

/// How long a guardian gets to exit once told goodbye, or once its socket closed.
constexpr std::chrono::seconds guardian_exit_wait{2};

/// How long the guardian may take, beyond the stop's grace, to report the job's end: its own
/// part (a SIGKILL to a tree, the reaping) takes milliseconds. Past it, s3lect ends the tree
/// and the guardian itself (kill_unanswering_guardian), so that a stop never hangs.
constexpr std::chrono::milliseconds guardian_answer_margin{1000};

/// How long the guardian may take to report that the command started (milliseconds, or tens
/// of them with a PID namespace), checked and resumed if stopped every launch_poll.
constexpr std::chrono::seconds guardian_launch_bound{5};
constexpr std::chrono::milliseconds launch_poll{100};

/// How long the tree is killed for, pass after pass, when the guardian does not answer.
constexpr std::chrono::milliseconds tree_kill_bound{1000};
constexpr std::chrono::milliseconds tree_kill_rescan{10};

/// What the guardian runs: the command with the leadership's variables, and how to release the
/// lock should s3lect die (the slot, then the arguments of `s3lect run`).
guardian_request job_request(const supervisor& s, const guardian::lead_until& confirmed) {
  guardian_request request;
  request.guardian_path = s.jobs.guardian_path;
  request.command = s.command;
  request.command.environment = {{"S3LECT_TERM", std::to_string(confirmed.term)},
                                 {"S3LECT_LEADER_ID", s.options.elector.config.server_id},
                                 {"S3LECT_LOCK", s.options.store.url()}};
  // The id s3lect runs with: a default one (HOSTNAME:PID) names s3lect's PID, which the
  // release, run by the guardian, does not have.
  request.release_args = {"--holder", s.options.elector.config.server_id};
  if (s.slot) {
    request.command.environment.back().second = slot_key(s.options.store.url(), *s.slot);
    request.command.environment.emplace_back("S3LECT_SLOT", std::to_string(*s.slot));
    request.release_args.insert(request.release_args.end(), {"--slot", std::to_string(*s.slot)});
  }
  request.release_args.emplace_back("--");
  request.release_args.insert(request.release_args.end(), s.options.args.begin(),
                              s.options.args.end());
  request.confirmed = confirmed;
  request.kill_grace = s.options.kill_grace;
  request.level = s.jobs.level;
  request.log_json = s.log.format() == log_format::json;
  request.log_info = s.log.enabled(log_level::info);
  for (const auto& field : s.log.context()) request.log_fields.emplace_back(field.key, field.value);
  return request;
}

/// Waits for the guardian process to exit, for a while.
asio::awaitable<std::optional<int>> reap_guardian(guardian_process& job) {
  asio::steady_timer bound(co_await asio::this_coro::executor, guardian_exit_wait);
  auto exited = co_await (job.async_wait_exit() || bound.async_wait(asio::use_awaitable));
  if (exited.index() == 0) co_return std::get<0>(exited);
  co_return std::nullopt;
}

/// Resumes the job's guardian if something stopped it, and says so.
void resume_guardian(supervisor& s) {
  if (s.job && s.job->resume_if_stopped()) {
    s.log.log(log_level::warning, "the job's guardian was stopped (SIGSTOP): resumed it",
              {{"guardian", s.job->pid()}, {"pid", s.started.pid}});
  }
}

/// The guardian does not answer in time (stopped again and again, or stuck): s3lect ends the
/// job's whole tree itself, then kills and reaps the guardian. Ends s.job. The tree is known
/// gone when its cgroup was emptied or no process of it was left running in /proc.
asio::awaitable<job_end> kill_unanswering_guardian(supervisor& s, const char* waited_for) {
  const pid_t guardian_pid = s.job->pid();
  s.log.log(log_level::error,
            "the job's guardian does not answer: killing the job's tree and the guardian",
            {{"guardian", guardian_pid}, {"pid", s.started.pid}, {"waited_for", waited_for}});
  job_end end;
  end.status = 128 + SIGKILL;
  end.guardian_lost = true;
  const bool cgroup_emptied =
      !s.started.cgroup.empty() && guardian::kill_and_remove_cgroup(s.started.cgroup);
  asio::steady_timer rescan(co_await asio::this_coro::executor);
  const auto give_up = steady::now() + tree_kill_bound;
  unsigned running = 0;
  while ((running = s.job->kill_tree_pass(s.started.pid)) > 0 && steady::now() < give_up) {
    rescan.expires_after(tree_kill_rescan);
    co_await rescan.async_wait(asio::use_awaitable);
  }
  end.tree_gone = cgroup_emptied || (running == 0 && guardian_process::process_table_available());
  s.job->kill();
  co_await reap_guardian(*s.job);
  s.job.reset();
  s.log.log(end.tree_gone ? log_level::warning : log_level::error,
            end.tree_gone ? "the job's tree and its guardian are killed"
                          : "the job's guardian is killed: processes of the job may still run",
            {{"guardian", guardian_pid}, {"pid", s.started.pid}});
  co_return end;
}

/// Waits for the guardian's first message, the command's start (or why it could not start),
/// at most guardian_launch_bound, resuming the guardian should it be stopped meanwhile.
/// false: none came in time (the guardian and the tree are then killed).
asio::awaitable<bool> await_launch_report(supervisor& s) {
  asio::steady_timer poll(co_await asio::this_coro::executor);
  const auto give_up = steady::now() + guardian_launch_bound;
  while (!s.job->message_ready()) {
    if (steady::now() >= give_up) {
      const job_end end = co_await kill_unanswering_guardian(s, "start");
      s.tree_left_running = !end.tree_gone;
      co_return false;
    }
    resume_guardian(s);
    poll.expires_after(launch_poll);
    co_await (s.job->async_wait_message() || poll.async_wait(asio::use_awaitable));
  }
  co_return true;
}

}  // namespace

std::optional<guardian::lead_until> confirmed_leadership(const elector& election,
                                                         std::uint64_t term) {
  // Read before the snapshot, and one millisecond off the lease left (which the snapshot rounds
  // up to the millisecond): the moment sent is then never later than the elector's deadline.
  const std::int64_t before = guardian::boot_now_ns();
  const leadership_snapshot now = election.snapshot();
  if (!now.is_leader || now.term != term) return std::nullopt;
  const record_decoding written = decode_record(now.record_json);
  if (!written.record) return std::nullopt;
  const std::int64_t left_ns = std::chrono::nanoseconds(now.lease_remaining).count() - 1'000'000;
  return guardian::lead_until{before + left_ns, term, written.record->nonce};
}

asio::awaitable<error_code> start_job(supervisor& s, leadership_lease lease, std::string& step) {
  const auto confirmed = confirmed_leadership(s.election, lease.term);
  if (!confirmed) co_return make_error_code(errc::not_leader);
  error_code error;
  step = "guardian";
  s.job = guardian_process::spawn(co_await asio::this_coro::executor, job_request(s, *confirmed),
                                  error);
  if (!s.job) co_return error;
  s.confirmed_until = confirmed->boot_ns;
  if (!co_await await_launch_report(s)) co_return make_error_code(std::errc::timed_out);
  const auto message = s.job->take();
  if (message) {
    if (const auto* started = std::get_if<guardian::job_started>(&*message)) {
      s.started = *started;
      co_return error_code{};
    }
    if (const auto* failed = std::get_if<guardian::job_failed>(&*message)) {
      step = failed->step;
      error.assign(failed->error, boost::system::system_category());
    }
  }
  if (!error) error.assign(ESRCH, boost::system::system_category());  // it died first
  co_await reap_guardian(*s.job);
  s.job.reset();
  co_return error;
}

asio::awaitable<void> confirm_until_lost(supervisor& s, leadership_lease lease) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  std::uint64_t version = 0;
  for (;;) {
    // The elector's version grows with every successful renewal: each one extends the job's
    // deadline.
    auto [error] = co_await s.election.health_source().async_wait_change(version, token);
    version = s.election.snapshot().version;
    const auto confirmed = confirmed_leadership(s.election, lease.term);
    if (error || !confirmed) break;
    resume_guardian(s);
    if (s.job && confirmed->boot_ns > s.confirmed_until && s.job->send(*confirmed)) {
      s.confirmed_until = confirmed->boot_ns;
    }
  }
  co_await s.election.async_wait_for_loss(lease, token);
}

std::optional<job_end> end_reported(const std::optional<guardian::from_guardian>& message) {
  if (!message) return std::nullopt;
  const auto* ended = std::get_if<guardian::job_ended>(&*message);
  if (!ended) return std::nullopt;
  job_end end;
  end.status = ended->status;
  end.cause = ended->cause;
  end.leftovers = ended->leftovers;
  return end;
}

asio::awaitable<job_end> guardian_lost(supervisor& s) {
  const pid_t guardian_pid = s.job->pid();
  const std::optional<int> status = co_await reap_guardian(*s.job);
  s.job.reset();
  job_end end;
  end.guardian_lost = true;
  // Its PID namespace ended with it (its init dies with the guardian, and the kernel kills the
  // rest); a cgroup is emptied here. Else only the command itself died with it.
  if (!s.started.cgroup.empty()) {
    end.tree_gone = guardian::kill_and_remove_cgroup(s.started.cgroup);
  } else {
    end.tree_gone = s.jobs.level.pid_namespace;
  }
  s.log.log(
      log_level::error,
      end.tree_gone ? "the job's guardian died: the job is gone with it"
                    : "the job's guardian died: processes of the job may still run",
      {{"guardian_pid", guardian_pid},
       status ? log_field{"guardian_status", *status} : log_field{"guardian_status", "unknown"},
       {"pid", s.started.pid},
       {"isolation", s.started.isolation}});
  co_return end;
}

asio::awaitable<job_end> stop_job(supervisor& s, std::string reason) {
  const auto started = steady::now();
  const std::chrono::milliseconds grace = s.options.kill_grace;
  s.log.log(log_level::info, "stopping command",
            {{"pid", s.started.pid},
             {"signal", grace.count() == 0 ? "SIGKILL" : "SIGTERM"},
             {"grace_ms", grace.count()},
             {"reason", reason}});
  resume_guardian(s);
  s.job->send(guardian::stop_job{grace.count()});
  // The guardian answers within the grace and a margin, or s3lect ends the tree itself.
  asio::steady_timer answer_by(co_await asio::this_coro::executor);
  answer_by.expires_after(grace + guardian_answer_margin);
  std::optional<job_end> end;
  while (!end) {
    const auto event = co_await (s.job->async_wait_message() || s.signals.wait() ||
                                 answer_by.async_wait(asio::use_awaitable));
    while (const auto signal = s.signals.take()) {
      if (!is_stop_signal(*signal)) {
        pass_on(s, *signal);
      } else if (!s.shutdown_requested) {
        s.shutdown_requested = true;
        s.log.log(log_level::info, "stop requested, waiting for the command",
                  {{"signal", signal_name(*signal)}});
      } else {
        s.log.log(
            log_level::warning, "killing command",
            {{"pid", s.started.pid}, {"signal", "SIGKILL"}, {"reason", "second_stop_signal"}});
        resume_guardian(s);
        s.job->send(guardian::kill_job{});
        answer_by.expires_at(std::min(answer_by.expiry(), steady::now() + guardian_answer_margin));
      }
    }
    // Whatever else completed in the same turn: the message stays until taken.
    if (s.job->message_ready()) {
      const auto message = s.job->take();
      if (!message) co_return co_await guardian_lost(s);
      end = end_reported(message);
    } else if (event.index() == 2 && steady::now() >= answer_by.expiry()) {
      end = co_await kill_unanswering_guardian(s, "stop");
      end->cause = guardian::end_cause::killed;
    }
  }
  s.log.log(log_level::info, "command stopped",
            {{"pid", s.started.pid},
             {"status", end->status},
             {"killed", end->cause == guardian::end_cause::killed},
             {"stop_ms", ms_since(started)}});
  co_return *end;
}

asio::awaitable<void> retire_guardian(supervisor& s) {
  if (!s.job) co_return;
  s.job->send(guardian::farewell{});
  co_await reap_guardian(*s.job);
  s.job.reset();
}

}  // namespace s3lect::cli
