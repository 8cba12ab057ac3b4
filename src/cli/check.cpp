#include "cli/check.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/race_probe.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/store_client.hpp"
#include "cli/store_options.hpp"

#include <s3lect/error.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

namespace s3lect::cli {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::system_clock;

/// The findings of one check run.
struct check_report {
  std::vector<std::string> lines;
  std::string unsafe_reason;  ///< Non-empty when the store is unsafe for s3lect.
  std::string store_error;    ///< Non-empty when the store could not be probed at all.
  std::vector<std::chrono::microseconds> round_trips;
  /// The store's clock minus this machine's, per answer: status's clockOffsetMs convention.
  std::vector<double> offsets_seconds;
  std::chrono::steady_clock::duration duration{0};  ///< The whole check, races included.

  void ok(const std::string& what) { lines.push_back("  ok    " + what); }
  void info(const std::string& what) { lines.push_back("  info  " + what); }
  void fail(const std::string& what) {
    lines.push_back("  FAIL  " + what);
    if (unsafe_reason.empty()) unsafe_reason = what;
  }
  /// Records timing and clock samples of one answer received at `received`.
  void sample(const response_info& info, system_clock::time_point received) {
    if (info.http_status == 0) return;
    round_trips.push_back(info.round_trip);
    if (info.server_date) {
      // Date has one-second resolution and is truncated: the server's true time is on
      // average half a second later. The answer left the server about half a round trip ago.
      const auto local = received - info.round_trip / 2;
      const auto server = *info.server_date + std::chrono::milliseconds(500);
      offsets_seconds.push_back(std::chrono::duration<double>(server - local).count());
    }
  }
};

std::string random_suffix() {
  std::random_device device;
  char text[2 * 8 + 1];
  std::snprintf(text, sizeof text, "%08x%08x", static_cast<unsigned>(device()),
                static_cast<unsigned>(device()));
  return text;
}

std::string describe(const error_code& ec, const response_info& info) {
  std::string out = ec.message();
  if (info.http_status != 0) out += " (HTTP " + std::to_string(info.http_status);
  if (!info.error_code.empty()) out += " " + info.error_code;
  if (info.http_status != 0) out += ")";
  // With an S3 error code the status says it all; without one, the message says why.
  if (!info.message.empty() && (info.http_status == 0 || info.error_code.empty())) {
    out += ": " + info.message;
  }
  return out;
}

/// Errors that mean the probe cannot go on: we cannot reach or authenticate to the store.
bool is_store_error(const error_code& ec) {
  return ec == errc::access_denied || ec == errc::signature_mismatch ||
         ec == errc::invalid_access_key || ec == errc::clock_skewed || ec == errc::no_such_bucket ||
         ec == errc::bad_request || is_transient(ec) || ec == errc::tls_verification_failed ||
         ec.category() == credentials_category();
}

struct put_outcome {
  error_code ec;
  put_result result;
};

asio::awaitable<put_outcome> put(storage& client, std::string key, std::string body,
                                 put_condition condition, check_report& report) {
  auto [ec, result] = co_await client.async_put(
      std::move(key), std::move(body), std::move(condition), asio::as_tuple(asio::use_awaitable));
  report.sample(result.info, system_clock::now());
  co_return put_outcome{ec, std::move(result)};
}

struct get_outcome {
  error_code ec;
  get_result result;
};

asio::awaitable<get_outcome> get(storage& client, std::string key, check_report& report) {
  auto [ec, result] =
      co_await client.async_get(std::move(key), asio::as_tuple(asio::use_awaitable));
  report.sample(result.info, system_clock::now());
  co_return get_outcome{ec, std::move(result)};
}

/// After an ambiguous answer to a refused write: did the object keep `expected_body`?
asio::awaitable<bool> still_holds(storage& client, std::string key, std::string expected_body,
                                  check_report& report) {
  auto read = co_await get(client, std::move(key), report);
  co_return !read.ec && read.result.found && read.result.found->body == expected_body;
}

/// What the steps of the probe share.
struct probe_context {
  storage& client;
  std::string scratch_key;
  std::string missing_key;
  std::string nonce;  ///< In every body written, so that a leftover says which run wrote it.
  check_report& report;
  bool azure = false;  ///< Azure Blob Storage: the client sends ETags quoted itself.
};

/// The body of the probe's write named `step`.
std::string probe_body(const probe_context& p, const std::string& step) {
  return R"({"probe":")" + step + R"(","nonce":")" + p.nonce + "\"}";
}

/// A conditional write of `body` that the store must refuse, `what` naming it in the report and
/// `header` the condition it sends. An ambiguous answer is resolved by re-reading: the object
/// must still hold `kept_body`. Returns whether the probe can go on.
asio::awaitable<bool> expect_refused(probe_context& p, std::string body, put_condition condition,
                                     std::string kept_body, std::string what, std::string header) {
  auto refused = co_await put(p.client, p.scratch_key, body, condition, p.report);
  if (!refused.ec) {
    p.report.fail(what + " succeeded: the store ignores " + header);
    co_return false;
  }
  if (refused.ec == errc::precondition_failed) {
    p.report.ok(what + ": refused (HTTP " + std::to_string(refused.result.info.http_status) + ")");
  } else if (co_await still_holds(p.client, p.scratch_key, kept_body, p.report)) {
    p.report.ok(what + ": refused, but answered " + describe(refused.ec, refused.result.info) +
                " instead of 412 (s3lect re-reads)");
  } else {
    p.report.fail(what + ": " + describe(refused.ec, refused.result.info) +
                  " and the object changed");
    co_return false;
  }
  co_return true;
}

/// Create-if-absent on a new key, then on the same key again. Returns the created object's
/// ETag, or nullopt when the probe ends here.
asio::awaitable<std::optional<std::string>> probe_create(probe_context& p) {
  const std::string first_body = probe_body(p, "create-1");
  const auto absent = put_condition::absent();
  auto created = co_await put(p.client, p.scratch_key, first_body, absent, p.report);
  if (created.ec) {
    if (is_store_error(created.ec) || created.ec == errc::outcome_unknown) {
      p.report.store_error =
          "create-if-absent failed: " + describe(created.ec, created.result.info);
    } else {
      p.report.fail("create-if-absent on a new key failed: " +
                    describe(created.ec, created.result.info));
    }
    co_return std::nullopt;
  }
  p.report.ok("create-if-absent on a new key: created");
  // Named, not temporaries in the co_await expression (GCC 12, docs/architecture.md).
  const std::string second_body = probe_body(p, "create-2");
  const std::string what = "create-if-absent on an existing key";
  const std::string header = "If-None-Match";
  const bool refused = co_await expect_refused(p, second_body, absent, first_body, what, header);
  if (!refused) co_return std::nullopt;
  co_return created.result.etag;
}

/// Reads the created object back: its body and ETag must be those written. Returns whether the
/// probe can go on.
asio::awaitable<bool> probe_read_back(probe_context& p, std::string etag) {
  auto read = co_await get(p.client, p.scratch_key, p.report);
  if (read.ec || !read.result.found) {
    p.report.fail("read-back failed: " +
                  (read.ec ? describe(read.ec, read.result.info) : std::string("object missing")));
    co_return false;
  }
  if (read.result.found->body != probe_body(p, "create-1")) {
    p.report.fail("read-back returned a different body than was written");
    co_return false;
  }
  if (read.result.found->etag != etag) {
    p.report.fail("read-back ETag " + read.result.found->etag + " differs from the PUT's " + etag);
    co_return false;
  }
  p.report.ok("read-back: body and ETag match the write");
  co_return true;
}

/// If-Match with the current ETag, which must replace the object, then with the replaced one,
/// which must be refused. Returns the object's ETag, or nullopt when the probe ends here.
asio::awaitable<std::optional<std::string>> probe_if_match(probe_context& p,
                                                           std::string stale_etag) {
  const std::string replaced_body = probe_body(p, "replace");
  const auto matches_current = put_condition::matches(stale_etag);
  auto replaced = co_await put(p.client, p.scratch_key, replaced_body, matches_current, p.report);
  if (replaced.ec) {
    p.report.fail("If-Match with the current ETag failed: " +
                  describe(replaced.ec, replaced.result.info));
    co_return std::nullopt;
  }
  p.report.ok("If-Match with the current ETag: replaced");
  const std::string stale_body = probe_body(p, "stale");
  const auto matches_stale = put_condition::matches(stale_etag);
  const std::string what = "If-Match with a stale ETag";
  const std::string header = "If-Match";
  const bool refused =
      co_await expect_refused(p, stale_body, matches_stale, replaced_body, what, header);
  if (!refused) co_return std::nullopt;
  co_return replaced.result.etag;
}

asio::awaitable<void> probe_missing_if_match(probe_context& p, std::string current_etag);

/// Quirks that s3lect copes with, reported so operators know their store; If-Match on a missing
/// key must still be refused.
asio::awaitable<void> probe_quirks(probe_context& p, std::string current_etag) {
  if (p.azure) {
    p.report.info("ETags in If-Match: sent quoted, as Azure's entity tags are");
    co_await probe_missing_if_match(p, std::move(current_etag));
    co_return;
  }
  const auto quoted_condition = put_condition::matches("\"" + current_etag + "\"");
  const std::string quoted_body = probe_body(p, "quoted");
  auto quoted = co_await put(p.client, p.scratch_key, quoted_body, quoted_condition, p.report);
  if (!quoted.ec) {
    p.report.info("quoted ETag in If-Match: accepted (s3lect sends ETags unquoted)");
  } else {
    p.report.info("quoted ETag in If-Match: refused (HTTP " +
                  std::to_string(quoted.result.info.http_status) +
                  "); s3lect sends ETags unquoted");
  }
  co_await probe_missing_if_match(p, std::move(current_etag));
}

/// If-Match on a missing key must be refused.
asio::awaitable<void> probe_missing_if_match(probe_context& p, std::string current_etag) {
  const auto matches_missing = put_condition::matches(current_etag);
  const std::string missing_body = probe_body(p, "missing");
  auto missing = co_await put(p.client, p.missing_key, missing_body, matches_missing, p.report);
  if (!missing.ec) {
    p.report.fail("If-Match on a missing key created the object: the store ignores If-Match");
    co_return;
  }
  const int status = missing.result.info.http_status;
  p.report.info("If-Match on a missing key: HTTP " + std::to_string(status) +
                (status == 404 ? " (as AWS)" : " (AWS answers 404)") +
                "; s3lect treats both as \"not yours\"");
}

/// Each step runs only if the ones before it found the store sound.
asio::awaitable<void> probe(probe_context& p) {
  const std::optional<std::string> created_etag = co_await probe_create(p);
  if (!created_etag) co_return;
  const bool read_back = co_await probe_read_back(p, *created_etag);
  if (!read_back) co_return;
  const std::optional<std::string> current_etag = co_await probe_if_match(p, *created_etag);
  if (!current_etag) co_return;
  co_await probe_quirks(p, *current_etag);
}

asio::awaitable<void> clean_up(store_client& client, std::string scratch_key,
                               std::string missing_key) {
  // Best effort: a leftover scratch object is harmless and says what made it.
  co_await client.remove(std::move(scratch_key));
  co_await client.remove(std::move(missing_key));
}

/// How many writers race, and for how many rounds (0: no races).
struct race_settings {
  int writers = 16;
  int rounds = 10;
};

/// The races, unless the store could not be probed at all: against a store that ignores
/// conditions they show how many writers win.
asio::awaitable<void> probe_races(store_client& client, std::vector<storage*> writers,
                                  std::string key_prefix, int rounds, check_report& report) {
  if (rounds == 0 || !report.store_error.empty()) co_return;
  const int writer_count = static_cast<int>(writers.size());
  race_findings races = co_await run_races(std::move(writers), client, key_prefix, rounds);
  for (auto& line : describe_races(races, writer_count)) {
    report.lines.push_back(std::move(line));
  }
  if (report.unsafe_reason.empty()) report.unsafe_reason = races.unsafe_reason;
  if (!races.store_error.empty()) report.store_error = "races: " + races.store_error;
  for (auto& key : races.keys) {
    co_await client.remove(std::move(key));
  }
}

asio::awaitable<void> run(store_client& client, std::vector<storage*> writers, std::string lock_key,
                          int rounds, check_report& report) {
  const std::string scratch_key = lock_key + ".s3lect-check-" + random_suffix();
  const std::string missing_key = scratch_key + "-missing";
  probe_context context{client,          scratch_key, missing_key,
                        random_suffix(), report,      client.is_azure()};
  co_await probe(context);
  co_await clean_up(client, scratch_key, missing_key);
  const std::string race_prefix = scratch_key + "-race";
  co_await probe_races(client, std::move(writers), race_prefix, rounds, report);
}

/// Reads --race-writers and --race-rounds; returns nullopt and sets `error` when out of range.
std::optional<race_settings> parse_race_settings(const parsed_args& args, std::string& error) {
  race_settings settings;
  const struct {
    const char* name;
    int* value;
    int min;
    int max;
  } options[] = {{"race-writers", &settings.writers, 2, 256},
                 {"race-rounds", &settings.rounds, 0, 1000}};
  for (const auto& option : options) {
    const auto text = args.get(option.name);
    if (!text) continue;
    int value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < option.min ||
        value > option.max) {
      error = std::string("--") + option.name + " wants a whole number from " +
              std::to_string(option.min) + " to " + std::to_string(option.max) + ", not '" + *text +
              "'";
      return std::nullopt;
    }
    *option.value = value;
  }
  return settings;
}

template <class T>
T median(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void print_timing(check_report& report) {
  if (!report.offsets_seconds.empty()) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "clock offset by the server's Date header: %+.1f s (the store's clock minus "
                  "this machine's, as status's clockOffsetMs; resolution about 1 s)",
                  median(report.offsets_seconds));
    report.info(line);
  }
  if (!report.round_trips.empty()) {
    auto sorted = report.round_trips;
    std::sort(sorted.begin(), sorted.end());
    char line[160];
    std::snprintf(line, sizeof line,
                  "round trip: median %.1f ms, min %.1f ms, max %.1f ms over %zu requests",
                  static_cast<double>(median(sorted).count()) / 1000.0,
                  static_cast<double>(sorted.front().count()) / 1000.0,
                  static_cast<double>(sorted.back().count()) / 1000.0, sorted.size());
    report.info(line);
  }
  char line[80];
  std::snprintf(line, sizeof line, "the check took %.2f s",
                std::chrono::duration<double>(report.duration).count());
  report.info(line);
}

constexpr const char* race_options_help =
    "  --race-writers N     writers racing each conditional write (default 16, 2 to 256)\n"
    "  --race-rounds N      rounds of races, create-if-absent then If-Match (default 10;\n"
    "                       0 skips the races)\n";

}  // namespace

const char* check_help() {
  return "usage: s3lect check --lock s3://BUCKET/KEY|az://CONTAINER/BLOB [options]\n"
         "Probes, on a scratch key beside the lock key, that the store honours create-if-absent\n"
         "and If-Match, returns written bodies and ETags, and reports its quirks, the clock skew\n"
         "against its Date header and the round-trip latency. Then writers race: each round\n"
         "they all try create-if-absent on a new key, then If-Match on its ETag; exactly one may\n"
         "win each race (ambiguous answers are settled by re-reading).\n"
         "Exit 0 when the store is safe for s3lect, 5 when it is not, 4 when it cannot be "
         "probed.\n";
}

int run_check(const std::vector<std::string>& args) {
  std::string error;
  std::vector<std::string> flags = store_flag_names();
  flags.push_back("help");
  std::vector<std::string> valued = store_valued_names();
  valued.insert(valued.end(), {"race-writers", "race-rounds"});
  auto parsed = parsed_args::parse(args, flags, valued, error);
  if (parsed && parsed->has("help")) {
    print_out(std::string(check_help()) + "options:\n" + store_options_help() + race_options_help +
              "\n" + exit_code_table());
    return exit_ok;
  }
  if (parsed && !parsed->positional().empty())
    error = "unexpected argument " + parsed->positional()[0];
  std::optional<store_target> target;
  std::optional<race_settings> races;
  if (parsed && error.empty()) races = parse_race_settings(*parsed, error);
  if (races) target = make_store_target(*parsed, error);
  if (!target) {
    print_err("s3lect check: " + error + "\n");
    return exit_usage;
  }

  asio::io_context io;
  store_client client(io.get_executor(), *target);
  // One client per racing writer, each with its own connection as separate processes would
  // have, sharing one credential source.
  std::vector<std::unique_ptr<store_client>> writer_clients;
  std::vector<storage*> writers;
  for (int i = 0; i < races->writers && races->rounds > 0; ++i) {
    writer_clients.push_back(client.sibling());
    writers.push_back(&writer_clients.back()->store());
  }
  check_report report;
  const auto started = std::chrono::steady_clock::now();
  run_to_completion(io, run(client, writers, target->key, races->rounds, report));
  report.duration = std::chrono::steady_clock::now() - started;

  print_out("s3lect check " + target->url() + " at " + client.endpoint() + " " + client.scope() +
            "\n");
  print_out("  info  " + client.credentials_description() + "\n");
  print_timing(report);
  for (const auto& line : report.lines) print_out(line + "\n");
  if (!report.store_error.empty()) {
    print_out("result: cannot probe the store: " + report.store_error + "\n");
    print_err("s3lect check: " + report.store_error + "\n");
    return exit_store_error;
  }
  if (!report.unsafe_reason.empty()) {
    print_out("result: UNSAFE: " + report.unsafe_reason + "\n");
    print_err("s3lect check: unsafe store: " + report.unsafe_reason + "\n");
    return exit_store_unsafe;
  }
  print_out("result: safe for s3lect\n");
  return exit_ok;
}

}  // namespace s3lect::cli
