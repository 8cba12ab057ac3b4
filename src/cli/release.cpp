#include "cli/release.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock_reader.hpp"
#include "cli/options.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/store_client.hpp"
#include "cli/store_options.hpp"

#include "base/log_text.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace s3lect::cli {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

namespace {

/// The lease of a record that does not state one (a Go writer's): Go's default LeaderTimeout.
constexpr milliseconds unstated_lease{std::chrono::seconds{15}};

/// The longest id --to takes: the library's limit on a server id.
constexpr std::size_t max_successor_id = 1024;

/// What the operator asked for.
struct release_request {
  std::optional<std::uint64_t> if_term;
  std::string to;                        ///< --to: the successor to name; empty: the record's best.
  bool force = false;                    ///< --force: name --to even if no candidate of the record.
  std::optional<milliseconds> keep_out;  ///< --keep-out; nullopt: default_keep_out().
};

/// True when `text` is valid UTF-8: a record holding anything else cannot be read back.
bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : log_text::utf8_sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

/// The record's lease, or Go's default for a record without one.
milliseconds lease_of(const lock_record& record) {
  return record.lease.value_or(unstated_lease);
}

/// What happened, for the exit code and the message.
struct release_outcome {
  int exit_code = exit_ok;
  std::string out;    ///< For stdout.
  std::string error;  ///< For stderr.
};

/// Errors after which the PUT certainly did not reach the store, so sending it again is safe.
/// Anything else ambiguous is resolved by re-reading, never by a blind retry that could answer
/// 412 to our own earlier write.
struct certainly_not_written {
  bool operator()(const error_code& ec) const noexcept {
    return ec == errc::resolve_failed || ec == errc::connect_failed ||
           ec == errc::tls_handshake_failed || ec == errc::throttled;
  }
};

/// One PUT attempt, its data passed as parameters so it owns them (GCC 12, docs/architecture.md).
asio::awaitable<std::tuple<error_code, put_result>> put_attempt(storage& store, std::string key,
                                                                std::string body,
                                                                put_condition condition) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  co_return co_await store.async_put(std::move(key), std::move(body), std::move(condition), token);
}

/// An outcome with `exit_code` and the message `error` for stderr.
release_outcome failed(int exit_code, std::string error) {
  release_outcome outcome;
  outcome.exit_code = exit_code;
  outcome.error = std::move(error);
  return outcome;
}

/// Why the record `read` found is not to be written over, if it is not: it could not be read,
/// there is none, it cannot be parsed, its term is not `if_term`, or it is released already.
std::optional<release_outcome> refusal(const lock_read& read, const std::string& url,
                                       const std::string& endpoint,
                                       std::optional<std::uint64_t> if_term) {
  if (read.error) {
    return failed(exit_store_error, "cannot read " + url + " at " + endpoint + ": " +
                                        describe_store_error(read.error, read.info));
  }
  if (!read.found)
    return failed(exit_no_record, "no lock record at " + url + ": nothing to release");
  if (!read.decoded.record) {
    return failed(exit_malformed_record,
                  url + ": malformed lock record: " + read.decoded.message +
                      "; refusing to overwrite a record whose term is unknown");
  }
  const lock_record& current = *read.decoded.record;
  if (if_term && current.term != *if_term) {
    return failed(exit_term_mismatch, "refusing to release " + url + ": its term is " +
                                          std::to_string(current.term) + ", not " +
                                          std::to_string(*if_term) +
                                          " (--if-term); leadership has changed since");
  }
  if (current.released) {
    release_outcome outcome;
    outcome.out = url + " is already released (term " + std::to_string(current.term) + ")";
    return outcome;
  }
  return std::nullopt;
}

/// Why --to names nobody the record knows, if it does: the named node would have the lock to
/// itself for the whole window, and a ghost leaves it to nobody (measured: 4.3 s of no leader).
std::optional<std::string> unknown_successor(const lock_record& current,
                                             const release_request& request) {
  if (request.to.empty() || request.force) return std::nullopt;
  const auto& listed = current.candidates;
  const bool known = std::any_of(listed.begin(), listed.end(),
                                 [&](const ranked_candidate& c) { return c.id == request.to; });
  if (known) return std::nullopt;
  std::string names;
  for (const ranked_candidate& c : listed) {
    if (c.id == current.leader_id) continue;
    names += (names.empty() ? "" : ", ") + log_text::value(c.id);
  }
  return "--to " + log_text::value(request.to) + " is not among the record's candidates (" +
         (names.empty() ? std::string("it lists none: S3 mode, or nobody watching") : names) +
         "); nothing was written. --force names it anyway";
}

asio::awaitable<release_outcome> release(store_client& client, std::string key, std::string url,
                                         release_request request) {
  const retry_policy policy;  // Named: no aggregate temporaries in co_await (GCC 12).
  const lock_read read = co_await read_lock(client, key, policy);
  const std::string endpoint = client.endpoint();
  if (auto refused = refusal(read, url, endpoint, request.if_term)) co_return std::move(*refused);
  const lock_record current = *read.decoded.record;
  if (!request.to.empty() && request.to == current.leader_id) {
    co_return failed(exit_usage, "--to " + log_text::value(request.to) +
                                     " names the holder itself, which a release keeps out");
  }
  if (auto unknown = unknown_successor(current, request)) co_return failed(exit_usage, *unknown);
  const lock_record next = forced_release_record(current, std::chrono::system_clock::now(),
                                                 request.to, request.keep_out);
  const std::string read_etag = read.found->etag;
  const auto [ec, result] = co_await write_released(client, key, read_etag, next, policy);
  if (ec == errc::precondition_failed) {
    co_return failed(exit_lost_race,
                     "the record at " + url +
                         " changed between reading and releasing it (the holder renewed it or "
                         "another node took over); nothing was written. Check `s3lect status` and "
                         "try again.");
  }
  if (ec) {
    co_return failed(exit_store_error, "cannot write " + url + " at " + endpoint + ": " +
                                           describe_store_error(ec, result.info));
  }
  release_outcome outcome;
  outcome.out = "released " + url + " (term " + std::to_string(current.term) + ", held by " +
                log_text::value(current.leader_id) + ", kept out for " +
                format_duration(*next.handover) + "; successor: " +
                (next.successor.empty() ? "any follower" : log_text::value(next.successor)) + ")";
  co_return outcome;
}

/// --if-term, --to and --keep-out into `request`; on a bad value, sets `error`.
void read_release_request(const parsed_args& args, release_request& request, std::string& error) {
  if (auto text = args.get("if-term")) {
    request.if_term = parse_term("--if-term", *text, error);
    if (!error.empty()) return;
  }
  if (auto to = args.get("to")) {
    if (to->empty() || to->size() > max_successor_id || !is_utf8(*to)) {
      error = "--to: expected a node's id (1 to 1024 bytes of UTF-8), got " + log_text::value(*to);
      return;
    }
    request.to = *to;
  }
  request.force = args.has("force");
  if (request.force && request.to.empty()) {
    error = "--force: only with --to";
    return;
  }
  if (auto text = args.get("keep-out")) {
    request.keep_out = parse_duration_at_most("--keep-out", *text, max_record_lease, error);
    if (request.keep_out && *request.keep_out <= milliseconds::zero()) {
      error = "--keep-out: must be greater than 0, got '" + *text + "'";
    }
  }
}

}  // namespace

std::string release_help() {
  return std::string(
             "usage: s3lect release --lock s3://BUCKET/KEY [--if-term T] [--to ID]\n"
             "                      [--keep-out DUR] [options]\n"
             "Forces a handover: reads the lock record and rewrites it as released, keeping its\n"
             "holder and term, with a fresh nonce, only if it is still the record read\n"
             "(If-Match). The record names the holder in keepOut: it stays out for --keep-out,\n"
             "so that another node takes over, with term T+1. It names a successor, which may\n"
             "take over at once while the others hold off for the same time: --to ID, else the\n"
             "first of the record's candidates (a peer-mode leader lists its watching\n"
             "followers), else none, and any follower but the holder may take over. The holder\n"
             "notices at its next renewal (within its frequent interval) and stops; until then\n"
             "it may still act, so protect shared resources with the term (the fencing token).\n"
             "Go nodes and s3lect nodes without coordination ignore both names.\n"
             "\n"
             "options:\n"
             "  --if-term T              release only if the record's term is T, so that a\n"
             "                           late command cannot release a later leadership\n"
             "                           (default: any term)\n"
             "  --to ID                  the node (its --id) that should take over (default: the\n"
             "                           record's first candidate, if any). ID must be one of\n"
             "                           the record's candidates (`s3lect status` lists them):\n"
             "                           else exit 2 and nothing is written, since a wrong name\n"
             "                           leaves the lock to nobody for the window\n"
             "  --force                  with --to: name ID even if the record does not list it\n"
             "                           (S3 mode, whose records list no candidates)\n"
             "  --keep-out DUR           how long the holder (and, with a successor, every\n"
             "                           other node) holds off, each node at most its own lease\n"
             "                           (default 2/3 of the record's leaseMs: 10s at 15s)\n") +
         store_options_help() +
         "  --help                   print this help\n"
         "\n"
         "Exit 0 when released or already released; on 6, 7 and 8 nothing is written.\n"
         "\n" +
         exit_code_table();
}

asio::awaitable<std::tuple<error_code, put_result>> write_released(storage& store, std::string key,
                                                                   std::string read_etag,
                                                                   lock_record next,
                                                                   retry_policy policy) {
  const std::string body = encode_record(next);
  const auto condition = put_condition::matches(read_etag);
  auto write = [&store, key, body, condition] { return put_attempt(store, key, body, condition); };
  const certainly_not_written retryable;
  auto [ec, result] = co_await async_retry(policy, write, retryable);
  if (ec == errc::conflict || ec == errc::outcome_unknown) {
    lock_read check = co_await read_lock(store, key, policy);
    if (!check.error && check.decoded.record && check.decoded.record->nonce == next.nonce) {
      ec.clear();
    } else if (!check.error && check.found && check.found->etag != read_etag) {
      ec = errc::precondition_failed;
    }
  }
  co_return std::make_tuple(ec, std::move(result));
}

lock_record released_record(const lock_record& current, std::chrono::system_clock::time_point now,
                            std::string successor, std::string keep_out,
                            std::optional<milliseconds> window) {
  lock_record next = current;
  next.released = true;
  next.last_updated = now;
  next.nonce = make_nonce();
  // A hold-off names someone: a window alone would tell the readers nothing.
  const bool names_someone = !successor.empty() || !keep_out.empty();
  next.successor = std::move(successor);
  next.keep_out = std::move(keep_out);
  next.handover = names_someone ? window : std::nullopt;
  next.coordination_note.clear();
  return next;
}

std::string listed_successor(const lock_record& current) {
  if (current.candidates.empty() || current.candidates.front().id == current.leader_id) return {};
  return current.candidates.front().id;
}

milliseconds default_keep_out(const lock_record& current) {
  return std::max(milliseconds{1}, lease_of(current) * 2 / 3);
}

lock_record forced_release_record(const lock_record& current,
                                  std::chrono::system_clock::time_point now, std::string to,
                                  std::optional<milliseconds> keep_out) {
  std::string successor = to.empty() ? listed_successor(current) : std::move(to);
  return released_record(current, now, std::move(successor), current.leader_id,
                         keep_out.value_or(default_keep_out(current)));
}

lock_record guardian_release_record(const lock_record& current,
                                    std::chrono::system_clock::time_point now) {
  const milliseconds window =
      std::clamp(lease_of(current) / 15, milliseconds{100}, milliseconds{1000});
  return released_record(current, now, listed_successor(current), {}, window);
}

int run_release(const std::vector<std::string>& args) {
  std::string error;
  const auto parsed = parse_store_command(args, {"if-term", "to", "keep-out"}, error, {"force"});
  if (parsed && parsed->has("help")) {
    print_out(release_help());
    return exit_ok;
  }
  release_request request;
  if (parsed) read_release_request(*parsed, request, error);
  std::optional<store_target> target;
  if (parsed && error.empty()) target = make_store_target(*parsed, error);
  if (!target) {
    print_err("s3lect release: " + error + "\n");
    return exit_usage;
  }

  asio::io_context io;
  store_client client(io.get_executor(), *target);
  const release_outcome outcome =
      run_to_completion(io, release(client, target->key, log_text::value(target->url()), request));
  if (!outcome.out.empty()) print_out(outcome.out + "\n");
  if (!outcome.error.empty()) print_err("s3lect release: " + outcome.error + "\n");
  return outcome.exit_code;
}

}  // namespace s3lect::cli
