#include "supervision/guardian_release.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock_reader.hpp"
#include "cli/log_output.hpp"
#include "cli/release.hpp"
#include "cli/run.hpp"
#include "cli/run_to_completion.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/io_context.hpp>

#include <charconv>
#include <optional>

namespace s3lect::cli {

namespace asio = boost::asio;

namespace {

/// What the guardian says.
struct release_request {
  std::uint64_t term = 0;
  std::string nonce;
  std::string processes;  ///< How many processes it killed, for the log.
  std::string kill_ms;    ///< How long that took.
  std::string holder;     ///< s3lect's id.
  std::optional<unsigned> slot;
  std::vector<std::string> run_args;
};

std::optional<release_request> parse_request(const std::vector<std::string>& args) {
  release_request request;
  std::size_t i = 0;
  bool has_term = false;
  for (; i + 1 < args.size() && args[i] != "--"; i += 2) {
    const std::string& value = args[i + 1];
    if (args[i] == "--term") {
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), request.term);
      has_term = ec == std::errc{} && end == value.data() + value.size();
    } else if (args[i] == "--nonce") {
      request.nonce = value;
    } else if (args[i] == "--processes") {
      request.processes = value;
    } else if (args[i] == "--kill-ms") {
      request.kill_ms = value;
    } else if (args[i] == "--holder") {
      request.holder = value;
    } else if (args[i] == "--slot") {
      request.slot = static_cast<unsigned>(std::stoul(value));
    } else {
      return std::nullopt;
    }
  }
  if (!has_term || request.nonce.empty() || request.holder.empty() || i >= args.size() ||
      args[i] != "--") {
    return std::nullopt;
  }
  request.run_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  return request;
}

/// Why the record `read` found is not s3lect's last write, if it is not; nullopt when it is.
std::optional<std::string> not_ours(const lock_read& read, const release_request& request,
                                    const std::string& self) {
  if (!read.found) return "there is no record";
  if (!read.decoded.record) return "the record cannot be parsed: " + read.decoded.message;
  const lock_record& record = *read.decoded.record;
  if (record.released) return "the record is released already";
  if (record.leader_id != self || record.term != request.term) {
    return "another leadership holds the record (holder " + record.leader_id + ", term " +
           std::to_string(record.term) + ")";
  }
  if (record.nonce != request.nonce) {
    return "s3lect wrote the record again after its last word to the guardian";
  }
  return std::nullopt;
}

asio::awaitable<int> release_for_s3lect(s3_client& client, std::string key, release_request request,
                                        const run_options& options, const log_output& log) {
  const retry_policy policy = options.elector.config.retry;
  const lock_read read = co_await read_lock(client, key, policy);
  if (read.error) {
    log.log(log_level::error, "cannot release the lock for s3lect: the store cannot be read",
            {{"error", describe_store_error(read.error, read.info)}});
    co_return exit_store_error;
  }
  if (const auto why = not_ours(read, request, request.holder)) {
    log.log(log_level::info, "not releasing the lock for s3lect: " + *why,
            {{"term", request.term}});
    co_return exit_lost_race;
  }
  const lock_record next =
      guardian_release_record(*read.decoded.record, std::chrono::system_clock::now());
  const auto [ec, result] = co_await write_released(client, key, read.found->etag, next, policy);
  if (ec == errc::precondition_failed) {
    log.log(log_level::info,
            "not releasing the lock for s3lect: the record changed between reading and writing",
            {{"term", request.term}});
    co_return exit_lost_race;
  }
  if (ec) {
    log.log(log_level::error, "cannot release the lock for s3lect",
            {{"error", describe_store_error(ec, result.info)}});
    co_return exit_store_error;
  }
  log.log(log_level::info, "lock released for s3lect, which is gone: a follower may take over",
          {{"term", request.term}});
  co_return exit_ok;
}

}  // namespace

int run_guardian_release(const std::vector<std::string>& args) {
  const auto request = parse_request(args);
  std::string error;
  const auto options = request ? parse_run_options(request->run_args, error) : std::nullopt;
  if (!options) {
    print_err("s3lect __guardian-release: not a user command (it is run by s3lect-guardian)\n");
    return exit_usage;
  }
  std::string key = options->elector.config.lock_key;
  std::string url = options->store.url();
  if (request->slot) {
    key = slot_key(key, *request->slot);
    url = slot_key(url, *request->slot);
  }
  const log_output log(options->elector.format, options->elector.level,
                       {{"lock", url}, {"id", request->holder}});
  log.log(
      log_level::warning, "s3lect is gone: its guardian killed the job, releasing the lock",
      {{"term", request->term}, {"processes", request->processes}, {"kill_ms", request->kill_ms}});
  asio::io_context io;
  s3_client client(io.get_executor(), options->store.config);
  return run_to_completion(io, release_for_s3lect(client, key, *request, *options, log));
}

}  // namespace s3lect::cli
