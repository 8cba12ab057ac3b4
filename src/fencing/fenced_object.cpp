// fenced_object: each operation is a coroutine on the storage's executor that reads, decides
// (fence_envelope.hpp) and writes conditionally, re-reading after every refused, conflicting or
// undecided PUT. The argument that this fences stale terms is in docs/safety-and-fencing.md.
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>

#include "fence_envelope.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <tuple>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

using read_outcome = std::tuple<error_code, fenced_read_result>;
using write_outcome = std::tuple<error_code, fenced_write_result>;

/// Whether a PUT's failure means "read again and decide again": the condition did not hold, a
/// concurrent write left it undecided, or it may or may not have committed.
bool calls_for_reread(const error_code& ec) {
  return ec == errc::precondition_failed || ec == errc::conflict || ec == errc::outcome_unknown;
}

/// How much of the object a read fetches.
enum class read_extent {
  whole,     ///< The body too (async_read, async_update); bounded by the store's reply limit.
  envelope,  ///< Its first bytes, which hold the envelope: all a write's decision needs.
};

/// One GET under the retry policy, read through the envelope.
asio::awaitable<read_outcome> read_current(storage& store, std::string key, retry_policy policy,
                                           read_extent extent, int& reads,
                                           std::optional<detail::fenced_stored>& out) {
  auto get_once = [&store, key, extent, &reads] {
    ++reads;
    if (extent == read_extent::envelope) {
      return store.async_get_head(key, detail::fenced_head_bytes,
                                  asio::as_tuple(asio::use_awaitable));
    }
    return store.async_get(key, asio::as_tuple(asio::use_awaitable));
  };
  auto [ec, got] = co_await async_retry(std::move(policy), get_once);
  fenced_read_result result;
  result.info = std::move(got.info);
  out.reset();
  if (ec || !got.found) co_return read_outcome{ec, std::move(result)};
  if (extent == read_extent::whole && got.found->truncated) {
    result.info.message =
        "the object is larger than the store's reply limit; stream it (s3lect get does)";
    co_return read_outcome{errc::body_too_large, std::move(result)};
  }
  std::string problem;
  out = detail::unwrap_fenced_object(*got.found, problem);
  if (!out) {
    result.info.message = std::move(problem);
    co_return read_outcome{errc::malformed_record, std::move(result)};
  }
  result.found = out->version;
  co_return read_outcome{error_code{}, std::move(result)};
}

asio::awaitable<read_outcome> run_read(storage* store, std::string key,
                                       fenced_object_config config) {
  int reads = 0;
  std::optional<detail::fenced_stored> current;
  co_return co_await read_current(*store, std::move(key), std::move(config.retry),
                                  read_extent::whole, reads, current);
}

/// Passes a body on to `sink` without its first `skip` bytes (the envelope).
struct skip_envelope {
  body_sink sink;
  std::size_t skip = 0;
  error_code operator()(std::string_view chunk) {
    const std::size_t skipped = std::min(skip, chunk.size());
    skip -= skipped;
    chunk.remove_prefix(skipped);
    return chunk.empty() ? error_code{} : sink(chunk);
  }
};

/// Reads the envelope, then streams the version it belongs to (If-Match on its ETag); a write
/// in between makes the stream fail with 412 and the read starts over.
asio::awaitable<read_outcome> run_read_to(storage* store, std::string key,
                                          fenced_object_config config, body_sink sink) {
  int reads = 0;
  for (int attempts = 0;; ++attempts) {
    std::optional<detail::fenced_stored> current;
    auto [ec, read] =
        co_await read_current(*store, key, config.retry, read_extent::envelope, reads, current);
    if (ec || !current) co_return read_outcome{ec, std::move(read)};
    skip_envelope stripped{sink, current->envelope_bytes};
    auto [stream_ec, streamed] = co_await store->async_get_to(
        key, std::move(stripped), current->version.etag, asio::as_tuple(asio::use_awaitable));
    read.info = std::move(streamed.info);
    if (stream_ec == errc::precondition_failed && attempts + 1 < config.max_decisions) continue;
    if (!stream_ec && !streamed.found) stream_ec = errc::precondition_failed;  // deleted since
    read.found->body.clear();
    co_return read_outcome{stream_ec, std::move(read)};
  }
}

/// What a write stores: the update's body, or a file's bytes streamed.
struct fenced_payload {
  fenced_update update;
  std::optional<std::string> file;  ///< set: the body is this file (update unused)
};

/// The update of async_write, recognisable so that its writes read the envelope only.
struct constant_update {
  std::string body;
  std::string operator()(const std::optional<fenced_version>&) const { return body; }
};

/// The conditional PUT of `body` (or `file`'s bytes) with `term` over what was read.
asio::awaitable<std::tuple<error_code, put_result>> put_fenced(
    storage& store, std::string key, std::uint64_t term, std::string write_id, std::string body,
    std::optional<std::string> file, std::optional<std::string> read_etag) {
  object_metadata metadata;
  metadata.emplace(std::string(fenced_term_metadata), std::to_string(term));
  const put_condition condition =
      read_etag ? put_condition::matches(std::move(*read_etag)) : put_condition::absent();
  std::string stored = detail::wrap_fenced_body(term, write_id, body);
  if (file) {
    file_body streamed{std::move(stored), std::move(*file)};
    co_return co_await store.async_put_file(std::move(key), std::move(streamed), condition,
                                            std::move(metadata),
                                            asio::as_tuple(asio::use_awaitable));
  }
  co_return co_await store.async_put_with_metadata(std::move(key), std::move(stored), condition,
                                                   std::move(metadata),
                                                   asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<write_outcome> run_write(storage* store, std::string key,
                                         fenced_object_config config, std::uint64_t term,
                                         fenced_payload payload, read_extent extent) {
  const std::string write_id = detail::new_write_id();
  fenced_write_result result;
  retry_schedule transient_retries(config.retry);
  asio::steady_timer backoff(co_await asio::this_coro::executor);
  for (int decisions = 0; decisions < config.max_decisions;) {
    std::optional<detail::fenced_stored> current;
    auto [read_ec, read] =
        co_await read_current(*store, key, config.retry, extent, result.reads, current);
    result.info = std::move(read.info);
    if (read_ec) co_return write_outcome{read_ec, std::move(result)};
    const detail::fence_decision decision = detail::decide_fenced_write(term, write_id, current);
    if (decision == detail::fence_decision::fenced_out) {
      result.stored_term = current->version.term;
      co_return write_outcome{errc::fenced_out, std::move(result)};
    }
    if (decision == detail::fence_decision::committed) {
      result.stored_term = term;
      result.etag = current->version.etag;
      co_return write_outcome{error_code{}, std::move(result)};
    }
    std::optional<std::string> read_etag;
    if (current) read_etag = current->version.etag;
    std::string body;
    if (!payload.file) {
      body = payload.update(current ? std::optional<fenced_version>(current->version)
                                    : std::optional<fenced_version>());
    }
    ++result.puts;
    auto [put_ec, put] = co_await put_fenced(*store, key, term, write_id, std::move(body),
                                             payload.file, std::move(read_etag));
    result.info = std::move(put.info);
    if (!put_ec) {
      result.stored_term = term;
      result.etag = std::move(put.etag);
      co_return write_outcome{error_code{}, std::move(result)};
    }
    if (calls_for_reread(put_ec)) {
      ++decisions;
      continue;
    }
    // A transient failure here means the PUT certainly never committed (s3_client reports one
    // that may have as outcome_unknown): wait as the policy says, then read and decide again.
    const std::optional<std::chrono::milliseconds> delay = transient_retries.after_failure(put_ec);
    if (!delay) co_return write_outcome{put_ec, std::move(result)};
    backoff.expires_after(*delay);
    auto [wait_ec] = co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
    if (wait_ec) co_return write_outcome{wait_ec, std::move(result)};
  }
  result.info.message =
      "lost " + std::to_string(config.max_decisions) + " races for the object in a row; giving up";
  co_return write_outcome{errc::conflict, std::move(result)};
}

/// Completes `handler` with a coroutine's outcome, on the handler's executor.
template <class Signature, class Result>
struct deliver_outcome {
  asio::any_completion_handler<Signature> handler;
  void operator()(std::exception_ptr error, std::tuple<error_code, Result> outcome) {
    error_code ec = std::get<0>(outcome);
    if (error) ec = errc::stopped;  // Only allocation failure can throw in these coroutines.
    asio::dispatch(asio::append(std::move(handler), ec, std::move(std::get<1>(outcome))));
  }
};

/// Starts `operation` so that the handler's terminal cancellation reaches its requests.
template <class Signature, class Result>
void spawn_with(storage& store, asio::awaitable<std::tuple<error_code, Result>> operation,
                asio::any_completion_handler<Signature> handler) {
  // The slot is read off the erased handler (docs/architecture.md, GCC 12 rules).
  const asio::cancellation_slot slot = handler.get_cancellation_slot();
  asio::co_spawn(
      store.get_executor(), std::move(operation),
      asio::bind_cancellation_slot(slot, deliver_outcome<Signature, Result>{std::move(handler)}));
}

}  // namespace

std::optional<std::string> fenced_object_config::validate() const {
  if (max_decisions < 1) return "max_decisions: must be at least 1";
  if (auto problem = retry.validate()) return "retry." + *problem;
  return std::nullopt;
}

fenced_object::fenced_object(storage& store, std::string key, fenced_object_config config)
    : store_(&store), key_(std::move(key)), config_(std::move(config)) {
  std::optional<std::string> problem = config_.validate();
  if (!problem && key_.empty()) problem = "key: must not be empty";
  if (problem) {
    throw boost::system::system_error(make_error_code(errc::invalid_config), *problem);
  }
}

fenced_update fenced_object::constant_body(std::string body) {
  return constant_update{std::move(body)};
}

void fenced_object::read_impl(asio::any_completion_handler<fenced_read_signature> handler) {
  spawn_with<fenced_read_signature, fenced_read_result>(*store_, run_read(store_, key_, config_),
                                                        std::move(handler));
}

void fenced_object::read_to_impl(body_sink sink,
                                 asio::any_completion_handler<fenced_read_signature> handler) {
  spawn_with<fenced_read_signature, fenced_read_result>(
      *store_, run_read_to(store_, key_, config_, std::move(sink)), std::move(handler));
}

void fenced_object::write_impl(std::uint64_t term, fenced_update update,
                               asio::any_completion_handler<fenced_write_signature> handler) {
  // A constant body does not depend on the current one: reading the envelope is enough.
  const read_extent extent =
      update.target<constant_update>() != nullptr ? read_extent::envelope : read_extent::whole;
  fenced_payload payload{std::move(update), std::nullopt};
  spawn_with<fenced_write_signature, fenced_write_result>(
      *store_, run_write(store_, key_, config_, term, std::move(payload), extent),
      std::move(handler));
}

void fenced_object::write_file_impl(std::uint64_t term, std::string path,
                                    asio::any_completion_handler<fenced_write_signature> handler) {
  fenced_payload payload{nullptr, std::move(path)};
  spawn_with<fenced_write_signature, fenced_write_result>(
      *store_, run_write(store_, key_, config_, term, std::move(payload), read_extent::envelope),
      std::move(handler));
}

}  // namespace s3lect::inline v1
