#include "cli/status_watch.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/leader_follow.hpp"
#include "cli/leadership_watch.hpp"
#include "cli/lock_reader.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/store_client.hpp"

#include "base/log_text.hpp"

#include <s3lect/error.hpp>
#include <s3lect/leader_endpoint.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds default_interval{std::chrono::seconds{1}};

/// How often S3 is read, for one --interval, after a leader's endpoint said its leadership
/// ended: in peer mode its successor takes over within milliseconds (its followers are told at
/// once), and waiting a whole --interval would print the new leader that much late.
constexpr milliseconds successor_poll{100};

/// What to watch and how to print it.
struct watch_settings {
  std::string key;
  std::string url;
  std::string endpoint;
  milliseconds interval = default_interval;
  bool json = false;
  /// --peer-ca was given: leaders without a key pin in their record may be followed too.
  bool have_peer_ca = false;
  /// The store's answers are authenticated (s3_config::answers_authenticated()): only then is
  /// a record's key pin trusted; over plain HTTP anyone on the path could have written it.
  bool pins_trusted = false;
};

/// What the watch loop carries from one read to the next.
struct watch_progress {
  leadership_watch tracker;
  bool store_failing = false;
  bool endpoint_failing = false;
  /// Where the next change printed was learned.
  change_source source = change_source::s3;
  /// False right after following the leader ended: the next read follows again only if it
  /// shows a change, so that a leader whose word S3 does not confirm is not asked in a loop.
  bool may_follow = true;
};

lock_observation observation_of(const lock_read& read) {
  lock_observation seen;
  if (!read.found) return seen;
  seen.found = true;
  seen.etag = read.found->etag;
  seen.record = read.decoded.record;
  if (read.found->last_modified && read.info.server_date) {
    seen.store_age =
        std::chrono::floor<milliseconds>(*read.info.server_date - *read.found->last_modified);
  }
  return seen;
}

/// Reports a failed read on stderr, once per streak of failures that retrying can fix. Returns
/// true when the watch must end: the failure is not one of those.
bool report_failure(const watch_settings& settings, const lock_read& read, bool& failing) {
  const std::string problem = "s3lect status: cannot read " + log_text::value(settings.url) +
                              " at " + settings.endpoint + ": " +
                              describe_store_error(read.error, read.info);
  if (!is_transient(read.error)) {
    print_err(problem + "\n");
    return true;
  }
  if (!failing) print_err(problem + " (retrying every interval)\n");
  failing = true;
  return false;
}

/// Prints a change of who leads as one line.
void print_change(const watch_settings& settings, const leadership_state& change,
                  change_source source) {
  const auto now = std::chrono::system_clock::now();
  const std::string line = settings.json ? watch_json_line(settings.url, change, source, now)
                                         : watch_text_line(change, source, now);
  print_out(line + "\n");
}

/// Feeds a successful read to the tracker and prints the change it makes, if any. Returns the
/// record when its leader should be followed now.
std::optional<lock_record> take_read(const watch_settings& settings, watch_progress& progress,
                                     const lock_read& read) {
  const lock_observation seen = observation_of(read);
  const auto change = progress.tracker.observe(std::chrono::steady_clock::now(), seen);
  if (change) print_change(settings, *change, progress.source);
  const bool follow_now = progress.may_follow || change.has_value();
  progress.source = change_source::s3;
  progress.may_follow = true;
  const auto& current = progress.tracker.current();
  if (!follow_now || !current || current->state != "leading" || !seen.record) return std::nullopt;
  lock_record record = *seen.record;
  if (!settings.pins_trusted) record.key_pin.clear();  // the leader is checked by --peer-ca
  if (!can_follow(record, settings.have_peer_ca)) return std::nullopt;
  return record;
}

/// Reports that the leader's endpoint cannot be followed, once per streak of failures.
void report_endpoint_failure(const watch_settings& settings, watch_progress& progress,
                             const lock_record& record, const std::string& problem) {
  if (progress.endpoint_failing) return;
  progress.endpoint_failing = true;
  print_err("s3lect status: cannot follow the leader's endpoint at " +
            log_text::value(record.leader_addr) + ": " + problem + "; reading " +
            log_text::value(settings.url) + " every " + std::to_string(settings.interval.count()) +
            "ms instead\n");
}

/// Follows `record`'s leader until it says it no longer leads, fails, or a signal arrives;
/// returns true for the signal.
asio::awaitable<bool> follow(const watch_settings& settings, watch_progress& progress,
                             leader_endpoint_client& endpoint, const lock_record& record,
                             signal_inbox& signals) {
  std::string problem;
  const follow_end end = co_await follow_leader(endpoint, record, signals, problem);
  if (end == follow_end::stopped) co_return true;
  progress.may_follow = false;
  if (end == follow_end::changed) {
    progress.source = change_source::peer;
    progress.endpoint_failing = false;
  } else {
    report_endpoint_failure(settings, progress, record, problem);
  }
  co_return false;
}

/// Reads every interval and prints each change until a stop signal, or follows the leader's
/// endpoint while it can and reads again at once when it says it no longer leads. A store
/// failure that retrying can fix is reported once per streak and retried; any other ends the
/// watch with exit 4.
asio::awaitable<int> watch(storage& client, leader_endpoint_client& endpoint,
                           watch_settings settings, signal_inbox& signals) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  watch_progress progress;
  // Named before the co_await: an aggregate temporary inside one is what GCC 12 miscompiles
  // (docs/architecture.md, GCC 12 coroutine rules).
  const retry_policy policy;
  auto successor_expected_until = std::chrono::steady_clock::time_point::min();
  for (;;) {
    const lock_read read = co_await read_lock(client, settings.key, policy);
    if (read.error) {
      if (report_failure(settings, read, progress.store_failing)) co_return exit_store_error;
    } else {
      progress.store_failing = false;
      if (const auto leader = take_read(settings, progress, read)) {
        if (co_await follow(settings, progress, endpoint, *leader, signals)) co_return exit_ok;
        if (progress.source == change_source::peer) {
          successor_expected_until = std::chrono::steady_clock::now() + settings.interval;
        }
        continue;  // One read at once, whatever ended the following.
      }
    }
    const bool successor_expected = std::chrono::steady_clock::now() < successor_expected_until;
    timer.expires_after(successor_expected ? std::min(settings.interval, successor_poll)
                                           : settings.interval);
    co_await (timer.async_wait(token) || signals.wait());
    if (signals.take()) co_return exit_ok;  // Only stop signals are caught.
  }
}

}  // namespace

const std::vector<std::string>& status_watch_flag_names() {
  static const std::vector<std::string> names{"watch", "json"};
  return names;
}

const std::vector<std::string>& status_watch_valued_names() {
  static const std::vector<std::string> names{"interval", "peer-ca"};
  return names;
}

const char* status_watch_help() {
  return "  --watch                  instead of printing the record once, read it every\n"
         "                           --interval and print one line per change of who leads,\n"
         "                           until SIGINT or SIGTERM (exit 0), e.g.\n"
         "    time=2026-11-21T10:30:45.123Z source=s3 state=leading leader=api-7 term=42 "
         "addr=10.0.1.42:8443\n"
         "                           state: leading, released, expired (not renewed for its\n"
         "                           lease: its holder is gone or cut off), none (no record) or\n"
         "                           unreadable; successor=ID ends a released line that names\n"
         "                           one. Store failures that retrying can fix are\n"
         "                           reported on stderr and retried; others exit 4.\n"
         "  --json                   with --watch: JSON lines, {\"time\",\"lock\",\"source\",\n"
         "                           \"state\",\"leaderID\",\"leaderAddr\",\"term\"} (and\n"
         "                           \"successor\" as above)\n"
         "  --interval DUR           with --watch: how often to read (default 1s)\n"
         "                           When the record names a leader's peer endpoint (leaderAddr,\n"
         "                           `run --peer`), the watch follows that endpoint instead: one\n"
         "                           request held open, answered when the leader stops leading,\n"
         "                           and reads S3 only then (source=peer in the line). Its\n"
         "                           certificate is trusted by the record's peerKeyPin, else by\n"
         "                           --peer-ca; without either, or when the endpoint fails, the\n"
         "                           watch reads S3 every --interval (source=s3).\n"
         "  --peer-ca FILE           with --watch: CAs for leaders' endpoints without a key pin\n";
}

int run_status_watch(const parsed_args& args, const store_target& target) {
  watch_settings settings;
  settings.key = target.key;
  settings.url = target.url();
  settings.endpoint = target.endpoint();
  settings.pins_trusted = target.answers_authenticated();
  settings.json = args.has("json");
  if (auto interval = args.get("interval")) {
    const auto parsed = parse_duration(*interval);
    if (!parsed || *parsed <= milliseconds::zero()) {
      print_err(
          "s3lect status: --interval: expected a duration greater than 0 such as 500ms or "
          "5s, got '" +
          *interval + "'\n");
      return exit_usage;
    }
    settings.interval = *parsed;
  }
  asio::io_context io;
  leader_endpoint_config endpoint_config;
  if (auto ca = args.get("peer-ca")) {
    endpoint_config.tls.ca_file = *ca;
    settings.have_peer_ca = true;
  }
  std::optional<leader_endpoint_client> endpoint;
  try {
    endpoint.emplace(io.get_executor(), endpoint_config);
  } catch (const boost::system::system_error& error) {
    // "leader_endpoint_config.tls.ca_file: cannot load …: invalid configuration [s3lect:20]":
    // the option stands for the field, and the code's text adds nothing.
    std::string what = error.what();
    what = what.substr(0, what.rfind(": " + error.code().message()));
    print_err("s3lect status: --peer-ca: " + what.substr(what.find(": ") + 2) + "\n");
    return exit_usage;
  }
  asio::signal_set caught(io, SIGINT, SIGTERM);
  signal_inbox signals(caught);
  store_client client(io.get_executor(), target);
  settings.endpoint = client.endpoint();
  return run_to_completion(io, watch(client, *endpoint, std::move(settings), signals));
}

}  // namespace s3lect::cli
