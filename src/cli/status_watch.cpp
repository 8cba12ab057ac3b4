#include "cli/status_watch.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/leadership_watch.hpp"
#include "cli/lock_reader.hpp"
#include "cli/run_to_completion.hpp"

#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

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

/// What to watch and how to print it.
struct watch_settings {
  std::string key;
  std::string url;
  std::string endpoint;
  milliseconds interval = default_interval;
  bool json = false;
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
  const std::string problem = "s3lect status: cannot read " + settings.url + " at " +
                              settings.endpoint + ": " +
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
void print_change(const watch_settings& settings, const leadership_state& change) {
  const auto now = std::chrono::system_clock::now();
  const std::string line =
      settings.json ? watch_json_line(settings.url, change, now) : watch_text_line(change, now);
  print_out(line + "\n");
}

/// Reads every interval and prints each change until a stop signal. A failure that retrying can
/// fix is reported once per streak and retried; any other ends the watch with exit 4.
asio::awaitable<int> watch(s3_client& client, watch_settings settings, asio::signal_set& signals) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  leadership_watch tracker;
  bool failing = false;
  // Named before the co_await: an aggregate temporary inside one is what GCC 12 miscompiles
  // (docs/architecture.md, GCC 12 coroutine rules).
  const retry_policy policy;
  for (;;) {
    const lock_read read = co_await read_lock(client, settings.key, policy);
    if (read.error) {
      if (report_failure(settings, read, failing)) co_return exit_store_error;
    } else {
      failing = false;
      const lock_observation seen = observation_of(read);
      if (auto change = tracker.observe(std::chrono::steady_clock::now(), seen)) {
        print_change(settings, *change);
      }
    }
    timer.expires_after(settings.interval);
    auto woken = co_await (timer.async_wait(token) || signals.async_wait(token));
    if (woken.index() == 1) co_return exit_ok;
  }
}

}  // namespace

const std::vector<std::string>& status_watch_flag_names() {
  static const std::vector<std::string> names{"watch", "json"};
  return names;
}

const std::vector<std::string>& status_watch_valued_names() {
  static const std::vector<std::string> names{"interval"};
  return names;
}

const char* status_watch_help() {
  return "  --watch                  instead of printing the record once, read it every\n"
         "                           --interval and print one line per change of who leads,\n"
         "                           until SIGINT or SIGTERM (exit 0), e.g.\n"
         "    time=2026-11-21T10:30:45.123Z state=leading leader=api-7 term=42 "
         "addr=10.0.1.42:8443\n"
         "                           state: leading, released, expired (not renewed for its\n"
         "                           lease: its holder is gone or cut off), none (no record) or\n"
         "                           unreadable. Store failures that retrying can fix are\n"
         "                           reported on stderr and retried; others exit 4.\n"
         "  --json                   with --watch: JSON lines, {\"time\",\"lock\",\"state\",\n"
         "                           \"leaderID\",\"leaderAddr\",\"term\"}\n"
         "  --interval DUR           with --watch: how often to read (default 1s)\n";
}

int run_status_watch(const parsed_args& args, const store_target& target) {
  watch_settings settings;
  settings.key = target.key;
  settings.url = target.url();
  settings.endpoint = target.config.endpoint;
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
  asio::signal_set signals(io, SIGINT, SIGTERM);
  s3_client client(io.get_executor(), target.config);
  settings.endpoint = client.config().endpoint;
  return run_to_completion(io, watch(client, std::move(settings), signals));
}

}  // namespace s3lect::cli
