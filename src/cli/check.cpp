#include "cli/check.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/store_options.hpp"

#include <s3lect/credentials.hpp>
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
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
  std::vector<double> skews_seconds;  ///< Local clock minus server clock, per answer.

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
      skews_seconds.push_back(std::chrono::duration<double>(local - server).count());
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
  if (!info.message.empty() && info.http_status == 0) out += ": " + info.message;
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

asio::awaitable<put_outcome> put(s3_client& client, std::string key, std::string body,
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

asio::awaitable<get_outcome> get(s3_client& client, std::string key, check_report& report) {
  auto [ec, result] =
      co_await client.async_get(std::move(key), asio::as_tuple(asio::use_awaitable));
  report.sample(result.info, system_clock::now());
  co_return get_outcome{ec, std::move(result)};
}

/// After an ambiguous answer to a refused write: did the object keep `expected_body`?
asio::awaitable<bool> still_holds(s3_client& client, std::string key, std::string expected_body,
                                  check_report& report) {
  auto read = co_await get(client, std::move(key), report);
  co_return !read.ec && read.result.found && read.result.found->body == expected_body;
}

asio::awaitable<void> probe(s3_client& client, std::string scratch_key, std::string missing_key,
                            check_report& report) {
  const std::string suffix = random_suffix();
  const std::string first_body = R"({"probe":"create-1","nonce":")" + suffix + "\"}";
  const std::string second_body = R"({"probe":"create-2","nonce":")" + suffix + "\"}";

  auto absent = put_condition::absent();
  auto created = co_await put(client, scratch_key, first_body, absent, report);
  if (created.ec) {
    if (is_store_error(created.ec) || created.ec == errc::outcome_unknown) {
      report.store_error = "create-if-absent failed: " + describe(created.ec, created.result.info);
    } else {
      report.fail("create-if-absent on a new key failed: " +
                  describe(created.ec, created.result.info));
    }
    co_return;
  }
  report.ok("create-if-absent on a new key: created");
  std::string current_etag = created.result.etag;

  auto second = co_await put(client, scratch_key, second_body, absent, report);
  if (!second.ec) {
    report.fail("create-if-absent on an existing key succeeded: the store ignores If-None-Match");
    co_return;
  }
  if (second.ec == errc::precondition_failed) {
    report.ok("create-if-absent on an existing key: refused (HTTP " +
              std::to_string(second.result.info.http_status) + ")");
  } else if (co_await still_holds(client, scratch_key, first_body, report)) {
    report.ok("create-if-absent on an existing key: refused, but answered " +
              describe(second.ec, second.result.info) + " instead of 412 (s3lect re-reads)");
  } else {
    report.fail("create-if-absent on an existing key: " + describe(second.ec, second.result.info) +
                " and the object changed");
    co_return;
  }

  auto read = co_await get(client, scratch_key, report);
  if (read.ec || !read.result.found) {
    report.fail("read-back failed: " +
                (read.ec ? describe(read.ec, read.result.info) : std::string("object missing")));
    co_return;
  }
  if (read.result.found->body != first_body) {
    report.fail("read-back returned a different body than was written");
    co_return;
  }
  if (read.result.found->etag != current_etag) {
    report.fail("read-back ETag " + read.result.found->etag + " differs from the PUT's " +
                current_etag);
    co_return;
  }
  report.ok("read-back: body and ETag match the write");

  const std::string stale_etag = current_etag;
  const std::string replaced_body = R"({"probe":"replace","nonce":")" + suffix + "\"}";
  auto matches_current = put_condition::matches(current_etag);
  auto replaced = co_await put(client, scratch_key, replaced_body, matches_current, report);
  if (replaced.ec) {
    report.fail("If-Match with the current ETag failed: " +
                describe(replaced.ec, replaced.result.info));
    co_return;
  }
  report.ok("If-Match with the current ETag: replaced");
  current_etag = replaced.result.etag;

  const std::string stale_body = R"({"probe":"stale","nonce":")" + suffix + "\"}";
  auto matches_stale = put_condition::matches(stale_etag);
  auto stale = co_await put(client, scratch_key, stale_body, matches_stale, report);
  if (!stale.ec) {
    report.fail("If-Match with a stale ETag succeeded: the store ignores If-Match");
    co_return;
  }
  if (stale.ec == errc::precondition_failed) {
    report.ok("If-Match with a stale ETag: refused (HTTP " +
              std::to_string(stale.result.info.http_status) + ")");
  } else if (co_await still_holds(client, scratch_key, replaced_body, report)) {
    report.ok("If-Match with a stale ETag: refused, but answered " +
              describe(stale.ec, stale.result.info) + " instead of 412 (s3lect re-reads)");
  } else {
    report.fail("If-Match with a stale ETag: " + describe(stale.ec, stale.result.info) +
                " and the object changed");
    co_return;
  }

  // Quirks that s3lect copes with, reported so operators know their store.
  const std::string quoted_body = R"({"probe":"quoted","nonce":")" + suffix + "\"}";
  auto quoted_condition = put_condition::matches("\"" + current_etag + "\"");
  auto quoted = co_await put(client, scratch_key, quoted_body, quoted_condition, report);
  if (!quoted.ec) {
    report.info("quoted ETag in If-Match: accepted (s3lect sends ETags unquoted)");
  } else {
    report.info("quoted ETag in If-Match: refused (HTTP " +
                std::to_string(quoted.result.info.http_status) + "); s3lect sends ETags unquoted");
  }

  const std::string missing_body = R"({"probe":"missing","nonce":")" + suffix + "\"}";
  auto matches_missing = put_condition::matches(current_etag);
  auto missing = co_await put(client, missing_key, missing_body, matches_missing, report);
  if (!missing.ec) {
    report.fail("If-Match on a missing key created the object: the store ignores If-Match");
    co_return;
  }
  report.info("If-Match on a missing key: HTTP " + std::to_string(missing.result.info.http_status) +
              (missing.result.info.http_status == 404 ? " (as AWS)" : " (AWS answers 404)") +
              "; s3lect treats both as \"not yours\"");
}

asio::awaitable<void> clean_up(s3_client& client, std::string scratch_key,
                               std::string missing_key) {
  // Best effort: a leftover scratch object is harmless and says what made it.
  co_await client.async_delete(std::move(scratch_key), asio::as_tuple(asio::use_awaitable));
  co_await client.async_delete(std::move(missing_key), asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> run(s3_client& client, std::string lock_key, check_report& report) {
  const std::string scratch_key = lock_key + ".s3lect-check-" + random_suffix();
  const std::string missing_key = scratch_key + "-missing";
  co_await probe(client, scratch_key, missing_key, report);
  co_await clean_up(client, scratch_key, missing_key);
}

/// Which provider supplied the credentials, with the key id masked and never the secret.
std::string describe_credentials(const credentials_origin& origin) {
  if (origin.provider.empty()) return "credentials: none obtained";
  const std::string& id = origin.access_key_id;
  std::string line = "credentials: from " + origin.provider + " (access key id ****" +
                     (id.size() > 4 ? id.substr(id.size() - 4) : std::string()) + ", ";
  if (!origin.expiration) return line + "long-term)";
  const auto minutes =
      std::chrono::duration_cast<std::chrono::minutes>(*origin.expiration - system_clock::now());
  return line + "temporary, expire in " + std::to_string(minutes.count()) + " min)";
}

template <class T>
T median(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void print_timing(check_report& report) {
  if (!report.skews_seconds.empty()) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "clock skew against the server's Date header: %+.1f s (local minus server, "
                  "resolution about 1 s)",
                  median(report.skews_seconds));
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
}

}  // namespace

const char* check_help() {
  return "usage: s3lect check --lock s3://BUCKET/KEY [options]\n"
         "Probes, on a scratch key beside the lock key, that the store honours create-if-absent\n"
         "and If-Match, returns written bodies and ETags, and reports its quirks, the clock skew\n"
         "against its Date header and the round-trip latency.\n"
         "Exit 0 when the store is safe for s3lect, 5 when it is not, 4 when it cannot be probed,\n"
         "2 on bad arguments.\n";
}

int run_check(const std::vector<std::string>& args) {
  std::string error;
  std::vector<std::string> flags = store_flag_names();
  flags.push_back("help");
  auto parsed = parsed_args::parse(args, flags, store_valued_names(), error);
  if (parsed && parsed->has("help")) {
    print_out(std::string(check_help()) + "options:\n" + store_options_help());
    return exit_ok;
  }
  if (parsed && !parsed->positional().empty())
    error = "unexpected argument " + parsed->positional()[0];
  std::optional<store_target> target;
  if (parsed && error.empty()) target = make_store_target(*parsed, error);
  if (!target) {
    print_err("s3lect check: " + error + "\n");
    return exit_usage;
  }

  asio::io_context io;
  s3_client client(io.get_executor(), target->config);
  check_report report;
  std::exception_ptr failure;
  asio::co_spawn(io, run(client, target->key, report),
                 [&failure](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);

  print_out("s3lect check s3://" + client.config().bucket + "/" + target->key + " at " +
            client.config().endpoint + " (region " + client.config().region + ")\n");
  print_out("  info  " + describe_credentials(client.credentials_in_use()) + "\n");
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
