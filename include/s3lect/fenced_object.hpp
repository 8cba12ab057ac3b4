// Fenced writes to one S3 object: a write carries the writer's leadership term and is refused
// once a higher term has written the object, so a deposed leader that still runs (a zombie)
// cannot overwrite its successor's work. Built on storage's conditional writes; the argument is
// in docs/safety-and-fencing.md.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/retry.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace s3lect::inline v1 {

/// The user metadata entry (`x-amz-meta-s3lect-term`) that shows a fenced object's term.
inline constexpr std::string_view fenced_term_metadata = "s3lect-term";

/// One version of a fenced object as its writer gave it.
struct fenced_version {
  std::string body;        ///< The body written, without the fencing envelope.
  std::uint64_t term = 0;  ///< Its writer's term; 0 for an object no fenced write wrote.
  std::string etag;        ///< Normalised ETag of the stored version.
};

/// Result of fenced_object::async_read: the current version, or nullopt when there is none.
struct fenced_read_result {
  std::optional<fenced_version> found;  ///< The current version; nullopt when none exists.
  response_info info;                   ///< The store's last answer.
};

/// Result of a fenced write, successful or not.
struct fenced_write_result {
  std::string etag;               ///< The new ETag on success.
  std::uint64_t stored_term = 0;  ///< The term the store holds now: ours, or the higher one.
  int reads = 0;                  ///< GETs this write sent.
  int puts = 0;                   ///< Conditional PUTs this write sent.
  response_info info;             ///< The store's last answer.
};

/// Completion signature of fenced_object::async_read.
using fenced_read_signature = void(boost::system::error_code, fenced_read_result);
/// Completion signature of fenced_object::async_write and async_update.
using fenced_write_signature = void(boost::system::error_code, fenced_write_result);

/// The new body computed from the current version (nullopt: no object yet). Called once per
/// decision, so again after every lost race; runs on the storage's executor.
using fenced_update = std::function<std::string(const std::optional<fenced_version>&)>;

/// How patient a fenced write is.
struct fenced_object_config {
  /// Transient failures (connection, timeout, 5xx on a GET) are retried under this policy.
  retry_policy retry{};
  /// Re-reads after a refused, conflicting or undecided PUT before giving up with
  /// errc::conflict. Each re-read decides afresh; nothing is ever re-sent blindly.
  int max_decisions = 16;

  /// Returns nullopt when valid, else "field: what is wrong".
  std::optional<std::string> validate() const;
};

/// One key written with fencing tokens. A write with term T reads the object; if its term is
/// above T it completes with errc::fenced_out and writes nothing, otherwise it PUTs with
/// If-Match on the ETag it read (If-None-Match: * when absent). A 412, a 409 or an unknown
/// outcome means read again and decide again. Equal terms are the same leader and may write.
/// Once a write with term T' has completed, no write with a term below T' is accepted.
///
/// Every stored version begins with one envelope line, `s3lect-fenced term=T write=ID`, that
/// makes each version's ETag unique (S3's ETag is the MD5 of the bytes: two versions with the
/// same body would share it, and a stale If-Match would succeed) and keeps the term where a
/// store that drops user metadata cannot lose it. Reads strip it. All writers of the key must
/// use fenced writes. Thread-safe; must outlive its pending operations, and so must the storage.
class fenced_object {
 public:
  /// The executor this object runs its operations on.
  using executor_type = storage::executor_type;

  /// Fenced writes to `key` through `store`. Throws boost::system::system_error
  /// (errc::invalid_config) for an empty key or an invalid config.
  fenced_object(storage& store, std::string key, fenced_object_config config = {});

  /// The storage's executor.
  executor_type get_executor() const { return store_->get_executor(); }
  /// The key written.
  const std::string& key() const noexcept { return key_; }

  /// Reads the current version. A body over the store's reply limit (s3_config::max_body_bytes)
  /// is errc::body_too_large: read such objects with async_read_to. Completes with
  /// `void(error_code, fenced_read_result)`; a missing object is success with `found == nullopt`;
  /// an envelope that does not parse, or a term in the metadata that contradicts it, is
  /// errc::malformed_record. Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_read(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, fenced_read_signature>(
        [this](auto handler) {
          read_impl(boost::asio::any_completion_handler<fenced_read_signature>(std::move(handler)));
        },
        token);
  }

  /// Reads the current version streaming its body, without the envelope, into `sink` (memory
  /// does not grow with the object): the envelope is read first, then the version it belongs
  /// to. Completes with `void(error_code, fenced_read_result)` whose `found->body` is empty;
  /// errors as async_read, and a sink's error ends the read with that error (part of the body
  /// may have reached the sink). Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_read_to(body_sink sink, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, fenced_read_signature>(
        [this](auto handler, body_sink body_to) {
          read_to_impl(
              std::move(body_to),
              boost::asio::any_completion_handler<fenced_read_signature>(std::move(handler)));
        },
        token, std::move(sink));
  }

  /// Writes `body` with `term`. Completes with `void(error_code, fenced_write_result)`:
  /// errc::fenced_out when a higher term has written (nothing written), errc::conflict when
  /// max_decisions races were lost, errc::malformed_record for an object not written by fenced
  /// writes' rules, another error when the store failed. Cancellation: terminal; a write
  /// cancelled while its PUT was in flight may or may not have been applied.
  template <class CompletionToken = default_token>
  auto async_write(std::uint64_t term, std::string body, CompletionToken&& token = {}) {
    return async_update(term, constant_body(std::move(body)), std::forward<CompletionToken>(token));
  }

  /// Writes the regular file at `path` with `term`, streamed (memory does not grow with the
  /// file; S3 takes up to 5 GiB in one PUT, azure_blob_client uploads more in blocks committed
  /// at once). Completes and cancels as async_write; a file that cannot be read fails with the
  /// error of storage::async_put_file.
  template <class CompletionToken = default_token>
  auto async_write_file(std::uint64_t term, std::string path, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, fenced_write_signature>(
        [this](auto handler, std::uint64_t write_term, std::string file) {
          write_file_impl(
              write_term, std::move(file),
              boost::asio::any_completion_handler<fenced_write_signature>(std::move(handler)));
        },
        token, term, std::move(path));
  }

  /// Writes what `update` makes of the current version, with `term` (read-modify-write: an
  /// append, a counter). Completes and cancels as async_write.
  template <class CompletionToken = default_token>
  auto async_update(std::uint64_t term, fenced_update update, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, fenced_write_signature>(
        [this](auto handler, std::uint64_t write_term, fenced_update write_update) {
          write_impl(
              write_term, std::move(write_update),
              boost::asio::any_completion_handler<fenced_write_signature>(std::move(handler)));
        },
        token, term, std::move(update));
  }

 private:
  static fenced_update constant_body(std::string body);
  void read_impl(boost::asio::any_completion_handler<fenced_read_signature> handler);
  void read_to_impl(body_sink sink,
                    boost::asio::any_completion_handler<fenced_read_signature> handler);
  void write_file_impl(std::uint64_t term, std::string path,
                       boost::asio::any_completion_handler<fenced_write_signature> handler);
  void write_impl(std::uint64_t term, fenced_update update,
                  boost::asio::any_completion_handler<fenced_write_signature> handler);

  storage* store_;
  std::string key_;
  fenced_object_config config_;
};

}  // namespace s3lect::inline v1
