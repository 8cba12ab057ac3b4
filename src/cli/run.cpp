#include "cli/run.hpp"

#include "cli/console.hpp"
#include "cli/effective_config.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock_reader.hpp"
#include "cli/log_output.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/server_limits.hpp"
#include "cli/store_client.hpp"
#include "supervision/command_supervisor.hpp"
#include "supervision/job_isolation.hpp"
#include "supervision/slot_supervisor.hpp"

#include "base/log_text.hpp"

#include <s3lect/core_dumps.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using boost::system::error_code;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

/// $PATH when the environment has none (as glibc's execvp, plus /usr/local/bin).
constexpr const char* default_search_path = "/usr/local/bin:/usr/bin:/bin";

/// The option to blame for a configuration the library refused at construction (an unreadable
/// certificate file). The message starts with the field: "health_server_config.tls.ca_file: ..."
/// from the peer server, "peer_client_config.tls.certificate_file: ..." from the follower's
/// client.
std::string construction_error(const std::string& what) {
  const std::string_view field = std::string_view(what).substr(0, what.find(':'));
  std::string option;
  if (field.starts_with("health_server_config.")) {
    option =
        option_for_server_field(field.substr(std::string_view("health_server_config.").size()));
  } else if (field.starts_with("peer_client_config.")) {
    option = option_for_field(
        "peer." + std::string(field.substr(std::string_view("peer_client_config.").size())));
  }
  return option.empty() ? "invalid configuration: " + what : option + ": " + what;
}

/// Logs every change of holder or term, as this node sees it.
asio::awaitable<void> observe(elector& election, const log_output& log, std::string self_id) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  std::uint64_t version = 0;
  std::optional<std::pair<std::string, std::uint64_t>> last;
  for (;;) {
    auto [error, status] = co_await election.async_wait_for_change(version, token);
    if (error) co_return;
    version = status.version;
    auto current = std::make_pair(status.leader_id, status.term);
    // Before the first read there is nothing to tell.
    if (!last && status.leader_id.empty() && status.term == 0) continue;
    if (last == current) continue;
    last = current;
    log.log(log_level::info, "leader changed",
            {{"holder", status.leader_id.empty() ? "none" : status.leader_id},
             {"holder_addr", status.leader_addr},
             {"term", status.term},
             {"self", status.leader_id == self_id}});
  }
}

/// The first read of the lock, before campaigning. With `wait`, a failure that retrying can fix
/// (s3lect::is_transient: timeouts, refused connections, DNS, TLS handshakes, 5xx, throttling)
/// is logged and the read retried every `interval` until the store answers; refused
/// credentials or a missing bucket still end the wait. nullopt: SIGINT or SIGTERM came first.
asio::awaitable<std::optional<lock_read>> read_at_start(storage& client, std::string key,
                                                        retry_policy policy, bool wait,
                                                        milliseconds interval,
                                                        signal_inbox& signals,
                                                        const log_output& log) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  const auto started = steady::now();
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (unsigned failures = 0;; ++failures) {
    lock_read read = co_await read_lock(client, key, policy);
    if (!read.error) {
      if (failures > 0) {
        log.log(log_level::info, "store reachable", {{"waited_ms", ms_since(started)}});
      }
      co_return read;
    }
    if (!wait || !is_transient(read.error)) co_return read;
    log.log(log_level::warning, "waiting for the store",
            {{"error", describe_store_error(read.error, read.info)},
             {"retry_in_ms", interval.count()}});
    timer.expires_after(interval);
    // A stop signal ends the wait; another one (nothing to forward it to yet) retries at once.
    co_await (timer.async_wait(token) || signals.wait());
    while (const auto signal = signals.take()) {
      if (is_stop_signal(*signal)) {
        log.log(log_level::info, "stopped while waiting for the store",
                {{"signal", signal_name(*signal)}});
        co_return std::nullopt;
      }
    }
  }
}

/// Constructs a library object with `make`; a configuration the library refuses (an unreadable
/// certificate file) is reported on stderr and gives nullptr.
template <class T, class Make>
std::unique_ptr<T> construct_or_report(Make make) {
  try {
    return make();
  } catch (const boost::system::system_error& e) {
    if (e.code() != errc::invalid_config) throw;
    print_err("s3lect run: " + construction_error(e.what()) + "\n");
    return nullptr;
  }
}

/// Whether the arguments before `--` ask for help (those after it are the command's).
bool asks_for_help(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help") return true;
  }
  return false;
}

/// The command's executable, looked up in $PATH as the shell would.
resolved_command resolve_in_path(const std::string& name) {
  const char* search_path = std::getenv("PATH");
  return resolve_command(name, search_path ? search_path : default_search_path);
}

/// What `s3lect run` has set up before the first read of the lock, for the steps after it.
struct run_context {
  const run_options& options;
  const log_output& output;
  asio::io_context& io;
  signal_inbox& signals;
  store_client& client;
  job_settings jobs;
  isolation_probe isolation;  ///< What the system allows, for the log.
};

/// The first read of the lock, reported. Returns s3lect's exit code when it must end here.
std::optional<int> read_before_campaigning(run_context& run) {
  const elector_config& settings = run.options.elector.config;
  const std::optional<lock_read> read =
      run_to_completion(run.io, read_at_start(run.client, settings.lock_key, settings.retry,
                                              run.options.wait_for_store,
                                              settings.frequent_interval, run.signals, run.output));
  if (!read) return exit_ok;  // Stopped while waiting for the store: nothing was held.
  if (read->error) {
    print_err("s3lect run: cannot read " + log_text::value(run.options.store.url()) + " at " +
              run.client.endpoint() + ": " + describe_store_error(read->error, read->info) + "\n");
    return exit_store_error;
  }
  if (read->found && !read->decoded.record) {
    run.output.log(log_level::warning,
                   "unreadable lock record: it can be taken over only once expired",
                   {{"error", read->decoded.message}});
  }
  return std::nullopt;
}

/// The servers `s3lect run` answers on while campaigning.
struct run_servers {
  std::unique_ptr<health_server> peer;
  std::unique_ptr<metrics_server> metrics;
};

/// Starts the peer health server and the metrics server, as configured. Listening before
/// the first store request: a node never advertises an address nobody answers at. Returns
/// s3lect's exit code when one cannot start.
std::optional<int> start_servers(run_context& run, elector& election,
                                 const std::function<std::string()>& render_metrics,
                                 run_servers& servers) {
  const serve_settings& serve = run.options.elector.serve;
  check_file_descriptors(serve, run.output);
  if (serve.peer_server) {
    health_server_config server_config = *serve.peer_server;
    server_config.log = run.output.library_logger();
    server_config.metrics = render_metrics;
    servers.peer = construct_or_report<health_server>([&, &source = election.health_source()] {
      return std::make_unique<health_server>(run.io.get_executor(), source, server_config);
    });
    if (!servers.peer) return exit_usage;
    if (const error_code ec = servers.peer->start()) {
      print_err("s3lect run: --peer-listen: cannot listen on " + server_config.bind_address + ": " +
                ec.message() + "\n");
      return exit_cannot_listen;
    }
  }
  if (serve.metrics_listen) {
    metrics_server_config metrics_config;
    metrics_config.bind_address = *serve.metrics_listen;
    metrics_config.render = render_metrics;
    liveness_limits limits;
    limits.max_loop_stall = serve.liveness_stall;
    metrics_config.liveness = [&election, limits] { return election.liveness(limits); };
    metrics_config.log = run.output.library_logger();
    servers.metrics = std::make_unique<metrics_server>(run.io.get_executor(), metrics_config);
    if (const error_code ec = servers.metrics->start()) {
      print_err("s3lect run: --metrics-listen: cannot listen on " + *serve.metrics_listen + ": " +
                ec.message() + "\n");
      return exit_cannot_listen;
    }
  }
  return std::nullopt;
}

/// The electors `s3lect run` campaigns with: one for the lock, or one per slot with --slots,
/// logging through `slot_logs`. Empty when the library refused the configuration (reported on
/// stderr).
std::vector<std::unique_ptr<elector>> make_electors(
    run_context& run, const std::vector<std::unique_ptr<log_output>>& slot_logs) {
  elector_config config = run.options.elector.config;
  config.log = run.output.library_logger();
  const unsigned slots = run.options.extras.slots;
  std::vector<std::unique_ptr<elector>> electors;
  for (unsigned slot = 0; slot < std::max(slots, 1u); ++slot) {
    if (slots > 0) {
      config.lock_key = slot_key(run.options.elector.config.lock_key, slot);
      config.log = slot_logs[slot]->library_logger();
    }
    auto election = construct_or_report<elector>([&] {
      return std::make_unique<elector>(run.io.get_executor(), run.client.store(), config);
    });
    if (!election) return {};
    electors.push_back(std::move(election));
  }
  return electors;
}

/// What of the job isolation this system does not allow, and why: what an operator needs to
/// decide on --isolation.
void log_isolation(const run_context& run) {
  std::vector<log_field> missing;
  if (!run.jobs.level.pid_namespace) {
    missing.push_back({"pid_namespace", run.isolation.available.pid_namespace
                                            ? "not asked for"
                                            : run.isolation.pid_namespace_problem});
  }
  if (!run.jobs.level.cgroup) {
    missing.push_back({"cgroup", run.isolation.available.cgroup ? "not asked for"
                                                                : run.isolation.cgroup_problem});
  }
  for (const auto& [processes, directory] : run.isolation.stale) {
    if (processes == 0) {
      run.output.log(log_level::info, "removed the empty cgroup of an earlier run's job",
                     {{"cgroup", directory}});
    } else {
      run.output.log(log_level::warning,
                     "a job of an earlier run outlived its s3lect and guardian: killed it",
                     {{"cgroup", directory}, {"processes", processes}});
    }
  }
  if (missing.empty()) return;
  run.output.log(log_level::info, "job isolation: not in use", std::move(missing));
}

/// Campaigns, and runs the command while leader, until s3lect must exit. Returns its exit code.
int campaign(run_context& run, spawn_request command) {
  const elector_config& settings = run.options.elector.config;
  const std::vector<std::unique_ptr<log_output>> slot_logs =
      slot_log_outputs(run.output, run.options);
  const std::vector<std::unique_ptr<elector>> electors = make_electors(run, slot_logs);
  if (electors.empty()) return exit_usage;

  // Metrics of the electors and of the servers, for the health server's /metrics and
  // --metrics-listen.
  metrics_registry registry;
  for (std::size_t slot = 0; slot < electors.size(); ++slot) {
    std::vector<metric_label> labels{{"bucket", run.options.store.bucket()}};
    if (run.options.extras.slots > 0) labels.push_back({"slot", std::to_string(slot)});
    registry.add(*electors[slot], labels);
  }
  const std::vector<metric_label> server_labels =
      collect_metrics(*electors.front(), {{"bucket", run.options.store.bucket()}}).labels;
  run_servers servers;
  const std::function<std::string()> render_metrics = [&registry, &servers, &server_labels] {
    return registry.render() + prometheus_text(servers_metrics(
                                   servers.peer.get(), servers.metrics.get(), server_labels));
  };
  // Listening before the first store request: /healthz answers while --wait-for-store waits,
  // and a busy port ends s3lect at once instead of once the store answers.
  if (const auto code = start_servers(run, *electors.front(), render_metrics, servers)) {
    return *code;
  }
  if (const auto code = read_before_campaigning(run)) return *code;
  run.io.restart();

  slot_supervisors supervisors;
  for (std::size_t slot = 0; slot < electors.size(); ++slot) {
    const log_output& log = slot_logs.empty() ? run.output : *slot_logs[slot];
    supervisors.push_back(std::unique_ptr<supervisor>(
        new supervisor{*electors[slot], log, run.options, command, run.signals, run.jobs}));
    supervisors.back()->node_log = &run.output;
    if (run.options.extras.slots > 0) supervisors.back()->slot = static_cast<unsigned>(slot);
  }
  supervisor& state = *supervisors.front();
  state.peer_server = servers.peer.get();
  state.metrics = servers.metrics.get();
  if (run.options.extras.timeout) state.give_up_at = steady::now() + *run.options.extras.timeout;
  run.output.log(log_level::info, "campaigning",
                 {{"command", run.options.command[0]},
                  {"lease_ms", settings.lease.count()},
                  {"renew_deadline_ms", settings.renew_deadline.count()},
                  {"kill_grace_ms", run.options.kill_grace.count()},
                  {"peer", settings.peer.enabled},
                  {"addr", electors.front()->config().server_address},
                  {"slots", run.options.extras.slots},
                  {"isolation", guardian::isolation_name(run.jobs.level)}});
  log_isolation(run);
  run.output.log(log_level::debug, "configuration", effective_config_fields(run.options));
  if (run.options.extras.slots > 0) {
    return run_to_completion(run.io, supervise_slots_and_stop(supervisors));
  }
  state.election.start();
  asio::co_spawn(run.io, observe(state.election, run.output, settings.server_id), asio::detached);
  return run_to_completion(run.io, supervise_and_stop(state));
}

/// Finds the job guardian and what isolation the system allows its jobs; refuses what
/// --isolation requires and the system does not allow. Returns s3lect's exit code when it must
/// end here.
std::optional<int> prepare_guardian(const run_options& options, job_settings& jobs,
                                    std::optional<isolation_probe>& probe) {
  jobs.guardian_path = find_guardian();
  if (jobs.guardian_path.empty()) {
    print_err(
        "s3lect run: cannot find s3lect-guardian, which runs every command (expected "
        "beside s3lect, in " S3LECT_GUARDIAN_FROM_BINDIR
        " relative to it, or at " S3LECT_GUARDIAN_PATH "; S3LECT_GUARDIAN may name it)\n");
    return exit_failure;
  }
  std::string error;
  probe = probe_isolation(jobs.guardian_path, error);
  if (!probe) {
    print_err("s3lect run: cannot run the job guardian: " + error + "\n");
    return exit_failure;
  }
  const auto level = choose_isolation(*probe, options.extras.isolation, error);
  if (!level) {
    print_err("s3lect run: --isolation: " + error + "\n");
    return exit_usage;
  }
  jobs.level = *level;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_kill_grace(milliseconds kill_grace, const elector_config& config) {
  const milliseconds margin = config.lease - config.renew_deadline;
  if (kill_grace < margin) return std::nullopt;
  return "--kill-grace: must be less than lease - renew deadline (" +
         std::to_string(margin.count()) + " ms), so that the command is gone before another " +
         "node may take over; is " + std::to_string(kill_grace.count()) + " ms";
}

namespace {

/// Every option `run` takes: flags, and options with a value.
std::pair<std::vector<std::string>, std::vector<std::string>> run_option_names() {
  std::vector<std::string> flags = store_flag_names();
  flags.insert(flags.end(), elector_flag_names().begin(), elector_flag_names().end());
  std::vector<std::string> valued = store_valued_names();
  valued.insert(valued.end(), elector_valued_names().begin(), elector_valued_names().end());
  flags.insert(flags.end(), serve_flag_names().begin(), serve_flag_names().end());
  valued.insert(valued.end(), serve_valued_names().begin(), serve_valued_names().end());
  valued.push_back("kill-grace");
  flags.push_back("wait-for-store");
  flags.insert(flags.end(), run_extra_flag_names().begin(), run_extra_flag_names().end());
  valued.insert(valued.end(), run_extra_valued_names().begin(), run_extra_valued_names().end());
  return {flags, valued};
}

}  // namespace

std::optional<run_options> parse_run_options(const std::vector<std::string>& args,
                                             std::string& error) {
  const auto [flags, valued] = run_option_names();
  auto parsed = parsed_args::parse(args, flags, valued, error);
  if (!parsed) return std::nullopt;
  if (!parsed->positional().empty()) {
    error = "unexpected argument '" + parsed->positional()[0] +
            "' (the command goes after --: s3lect run [options] -- COMMAND [ARGS...])";
    return std::nullopt;
  }
  auto extras = read_run_extras(*parsed, error);
  if (!extras) return std::nullopt;
  const bool command_optional = extras->print_config && parsed->trailing().empty();
  if (!command_optional && (parsed->trailing().empty() || parsed->trailing()[0].empty())) {
    error = "missing the command: s3lect run [options] -- COMMAND [ARGS...]";
    return std::nullopt;
  }
  run_options options;
  options.extras = *extras;
  options.command = parsed->trailing();
  options.args = args;
  options.wait_for_store = parsed->has("wait-for-store");
  if (auto grace = parsed->get("kill-grace")) {
    auto value = parse_duration(*grace);
    if (!value) {
      error = "--kill-grace: expected a duration such as 500ms, 3s or 1m, got '" + *grace + "'";
      return std::nullopt;
    }
    options.kill_grace = *value;
  }
  auto target = make_store_target(*parsed, error);
  if (!target) return std::nullopt;
  options.store = std::move(*target);
  auto settings = make_elector_settings(*parsed, options.store, error);
  if (!settings) return std::nullopt;
  options.elector = std::move(*settings);
  if (!parsed->has("kill-grace")) {
    options.kill_grace = options.elector.config.stop_grace();
    if (parsed->has("lease") || parsed->has("renew-deadline")) {
      options.elector.derived.push_back("kill-grace");
    }
  }
  if (options.extras.slots > 0 && options.elector.config.peer.enabled) {
    error =
        "--slots: not with --peer: the health endpoint answers for one lock, and the slots "
        "are several";
    return std::nullopt;
  }
  if (auto problem = check_kill_grace(options.kill_grace, options.elector.config)) {
    error = *problem;
    return std::nullopt;
  }
  return options;
}

int run_run(const std::vector<std::string>& args) {
  // Before anything is opened: these descriptors were handed to us, and go on to COMMAND.
  const std::set<int> inherited = open_descriptors();
  if (asks_for_help(args)) {
    print_out(run_help());
    return exit_ok;
  }
  std::string error;
  const auto options = parse_run_options(args, error);
  if (!options) {
    print_err("s3lect run: " + error + "\n");
    return exit_usage;
  }
  // Before the credentials are used (docs/operations.md#core-dumps).
  if (const auto ec = options->extras.allow_core_dumps ? boost::system::error_code{}
                                                       : exclude_from_core_dumps())
    print_err("s3lect run: warning: cannot keep secrets out of core dumps: " + ec.message() + "\n");
  if (options->extras.print_config) {
    print_out(print_config_text(*options));
    return exit_ok;
  }
  const resolved_command resolved = resolve_in_path(options->command[0]);
  if (resolved.error != 0) {
    print_err("s3lect run: " + options->command[0] + ": " +
              (resolved.error == ENOENT ? "command not found" : "not an executable file") + "\n");
    return resolved.error == ENOENT ? exit_not_found : exit_not_executable;
  }
  job_settings jobs;
  std::optional<isolation_probe> probe;
  if (const auto code = prepare_guardian(*options, jobs, probe)) return *code;

  // A closed stderr pipe must not kill us (and with us, by PDEATHSIG, the command). The
  // command gets the disposition we were started with.
  struct sigaction original_sigpipe {};
  ::sigaction(SIGPIPE, nullptr, &original_sigpipe);
  ::signal(SIGPIPE, SIG_IGN);
  spawn_request command;
  command.path = resolved.path;
  command.argv = options->command;
  command.inherited_descriptors = inherited;
  command.sigpipe_ignored = original_sigpipe.sa_handler == SIG_IGN;
  command.stdin_from_dev_null = !options->extras.pass_stdin;

  const log_output output(
      options->elector.format, options->elector.level,
      {{"lock", options->store.url()}, {"id", options->elector.config.server_id}});
  asio::io_context io;
  // Signals are caught from here on; one that arrives before the supervisor waits is queued.
  asio::signal_set caught(io, SIGINT, SIGTERM, SIGHUP);
  caught.add(SIGUSR1);
  caught.add(SIGUSR2);
  signal_inbox signals(caught);
  store_client client(io.get_executor(), options->store);
  run_context run{*options, output, io, signals, client, jobs, *probe};
  return campaign(run, std::move(command));
}

}  // namespace s3lect::cli
