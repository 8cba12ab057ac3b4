// The storage abstraction the elector runs on: read an object with its ETag, and write it
// only if it is absent or still has a given ETag. Implemented by s3_client (the real store) and
// memory_storage (unit tests and fault injection).
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/completion_token.hpp>
#include <s3lect/response_info.hpp>
#include <s3lect/store_clock_offset.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace s3lect::inline v1 {

/// User metadata of an object: the `x-amz-meta-NAME: value` headers, keyed by NAME in lower case
/// (S3 lower-cases metadata names). Values are ASCII without control characters.
using object_metadata = std::map<std::string, std::string, std::less<>>;

/// An object's body and its ETag. ETags are kept normalised: without quotes or a `W/` prefix.
struct object {
  std::string body;  ///< The body (its first bytes when truncated).
  std::string etag;  ///< Its ETag, normalised.
  /// The `Last-Modified` header: when the store wrote this version, on the store's clock, to
  /// the second. With the answer's `Date` it tells the record's age without trusting any
  /// node's wall clock (expiry rule (c)). Unset when the store omits or garbles it.
  std::optional<std::chrono::system_clock::time_point> last_modified{};
  /// The user metadata stored with this version (fenced writes keep their term there).
  object_metadata metadata{};
  /// The store holds more than `body`: the reader stopped at its limit (s3_config's
  /// max_body_bytes, or async_get_head's), so `body` is only the object's first bytes.
  bool truncated = false;
};

/// Receives a body chunk by chunk, in order; an error stops the transfer and becomes the
/// operation's error.
using body_sink = std::function<boost::system::error_code(std::string_view chunk)>;

/// A body streamed from a file: `head`, then the bytes of the regular file at `path` (its size
/// is taken when the request is sent).
struct file_body {
  std::string head;  ///< Bytes sent before the file's.
  std::string path;  ///< The regular file whose bytes follow.
};

/// The condition of a conditional PUT.
struct put_condition {
  /// The two conditions S3 has.
  enum class kind {
    if_absent,  ///< `If-None-Match: *`: create only if no object exists at the key.
    if_match,   ///< `If-Match: etag`: replace only if the object still has this ETag.
  };
  kind type = kind::if_absent;  ///< Which condition.
  std::string etag;             ///< Normalised ETag; used with kind::if_match only.

  /// Create-if-absent.
  static put_condition absent() { return {kind::if_absent, {}}; }
  /// Replace-if-ETag-matches.
  static put_condition matches(std::string etag) { return {kind::if_match, std::move(etag)}; }
};

/// Result of a GET: the object, or nullopt when no object exists at the key (not an error).
struct get_result {
  std::optional<object> found;  ///< The object; nullopt when none exists at the key.
  response_info info;           ///< What the store said.
};

/// Result of a conditional PUT: the new ETag on success.
struct put_result {
  std::string etag;    ///< The new version's ETag.
  response_info info;  ///< What the store said.
};

/// Completion signature of storage::async_get.
using get_signature = void(boost::system::error_code, get_result);
/// Completion signature of storage::async_put.
using put_signature = void(boost::system::error_code, put_result);

/// Abstract awaitable object store. Implementations must honour the conditions exactly: a store
/// that ignores them hands the lock out twice. Thread-safe: operations may be started from any
/// thread; handlers run on the implementation's executor unless the token binds another one.
class storage {
 public:
  /// The executor this object runs its operations on.
  using executor_type = boost::asio::any_io_executor;

  virtual ~storage() = default;

  /// The executor the operations run on.
  virtual executor_type get_executor() const = 0;

  /// True when an answer can only come from the store itself: the channel authenticates it
  /// (HTTPS with a verified certificate, an in-process store) or never leaves this host (plain
  /// HTTP to a loopback address). False for plain HTTP over a network, where anyone on the path
  /// can answer in its place. A peer-mode follower takes the leader's address and key pin from
  /// the records it reads, so it trusts a pin only from a store for which this is true, or one
  /// declared trusted (peer_config::trust_unauthenticated_store; docs/peer-mode.md#trust-chain).
  /// The default is false: a storage must say so to be trusted.
  virtual bool answers_authenticated() const noexcept { return false; }

  /// Reads `key`. Completes with `void(error_code, get_result)`; a missing object is success
  /// with `found == nullopt`; a body over the reader's limit (s3_client: max_body_bytes) is cut
  /// there, with `found->truncated` set. Cancellation: terminal; the request is abandoned.
  template <class CompletionToken = default_token>
  auto async_get(std::string key, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, get_signature>(initiate_get{this}, token,
                                                                       std::move(key));
  }

  /// Writes `body` at `key` with user `metadata` if `condition` holds, which replaces all the
  /// metadata of the previous version. Completes as async_put; a storage that cannot store
  /// metadata completes with errc::bad_request without writing. Cancellation: terminal; a
  /// cancelled PUT's outcome is unknown.
  template <class CompletionToken = default_token>
  auto async_put_with_metadata(std::string key, std::string body, put_condition condition,
                               object_metadata metadata, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, put_signature>(
        initiate_put_with_metadata{this}, token, std::move(key), std::move(body),
        std::move(condition), std::move(metadata));
  }

  /// Writes `body` at `key` if `condition` holds. Completes with `void(error_code, put_result)`:
  /// errc::precondition_failed when the condition did not hold, errc::conflict for an undecided
  /// concurrent write, errc::outcome_unknown when the write may or may not have committed.
  /// Cancellation: terminal; a cancelled PUT's outcome is unknown.
  template <class CompletionToken = default_token>
  auto async_put(std::string key, std::string body, put_condition condition,
                 CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, put_signature>(
        initiate_put{this}, token, std::move(key), std::move(body), std::move(condition));
  }

  /// Reads `key` streaming its body into `sink` (memory does not grow with the object).
  /// Completes as async_get, with an empty `found->body`; a sink's error ends the read with
  /// that error. `if_etag`, when not empty, reads only the version with that ETag
  /// (errc::precondition_failed otherwise). Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_get_to(std::string key, body_sink sink, std::string if_etag,
                    CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, get_signature>(
        initiate_get_to{this}, token, std::move(key), std::move(sink), std::move(if_etag));
  }

  /// Reads `key`'s ETag, metadata and at most the first `max_bytes` of its body (a ranged GET):
  /// `found->truncated` tells that there is more. Completes as async_get. Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_get_head(std::string key, std::size_t max_bytes, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, get_signature>(
        initiate_get_head{this}, token, std::move(key), max_bytes);
  }

  /// As async_put_with_metadata with the body streamed from `body` (memory does not grow with
  /// the file). A file that cannot be opened or changes size while it is sent fails the write.
  /// Cancellation: terminal; a cancelled PUT's outcome is unknown.
  template <class CompletionToken = default_token>
  auto async_put_file(std::string key, file_body body, put_condition condition,
                      object_metadata metadata, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, put_signature>(
        initiate_put_file{this}, token, std::move(key), std::move(body), std::move(condition),
        std::move(metadata));
  }

 protected:
  /// Starts a GET; must complete `handler` exactly once, honouring its cancellation slot.
  virtual void get_impl(std::string key,
                        boost::asio::any_completion_handler<get_signature> handler) = 0;
  /// Starts a conditional PUT; must complete `handler` exactly once.
  virtual void put_impl(std::string key, std::string body, put_condition condition,
                        boost::asio::any_completion_handler<put_signature> handler) = 0;
  /// Starts a conditional PUT with user metadata; must complete `handler` exactly once. The
  /// default serves empty metadata through put_impl and refuses any other with
  /// errc::bad_request, so a storage written before metadata existed keeps compiling and never
  /// drops metadata silently.
  virtual void put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                                      object_metadata metadata,
                                      boost::asio::any_completion_handler<put_signature> handler);

  /// Starts a streamed GET. The default reads the whole object with get_impl and hands its
  /// body to the sink in one chunk (fine for a storage that holds objects in memory).
  virtual void get_to_impl(std::string key, body_sink sink, std::string if_etag,
                           boost::asio::any_completion_handler<get_signature> handler);
  /// Starts a GET of the first bytes. The default reads the whole object and cuts it.
  virtual void get_head_impl(std::string key, std::size_t max_bytes,
                             boost::asio::any_completion_handler<get_signature> handler);
  /// Starts a PUT from a file. The default reads the file into memory and calls
  /// put_with_metadata_impl.
  virtual void put_file_impl(std::string key, file_body body, put_condition condition,
                             object_metadata metadata,
                             boost::asio::any_completion_handler<put_signature> handler);

 private:
  struct initiate_get_to {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, body_sink sink, std::string if_etag) const {
      self->get_to_impl(
          std::move(key), std::move(sink), std::move(if_etag),
          boost::asio::any_completion_handler<get_signature>(std::forward<Handler>(handler)));
    }
  };
  struct initiate_get_head {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, std::size_t max_bytes) const {
      self->get_head_impl(
          std::move(key), max_bytes,
          boost::asio::any_completion_handler<get_signature>(std::forward<Handler>(handler)));
    }
  };
  struct initiate_put_file {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, file_body body, put_condition condition,
                    object_metadata metadata) const {
      self->put_file_impl(
          std::move(key), std::move(body), std::move(condition), std::move(metadata),
          boost::asio::any_completion_handler<put_signature>(std::forward<Handler>(handler)));
    }
  };
  struct initiate_get {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key) const {
      self->get_impl(std::move(key), boost::asio::any_completion_handler<get_signature>(
                                         std::forward<Handler>(handler)));
    }
  };
  struct initiate_put {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, std::string body,
                    put_condition condition) const {
      self->put_impl(
          std::move(key), std::move(body), std::move(condition),
          boost::asio::any_completion_handler<put_signature>(std::forward<Handler>(handler)));
    }
  };
  struct initiate_put_with_metadata {
    storage* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key, std::string body, put_condition condition,
                    object_metadata metadata) const {
      self->put_with_metadata_impl(
          std::move(key), std::move(body), std::move(condition), std::move(metadata),
          boost::asio::any_completion_handler<put_signature>(std::forward<Handler>(handler)));
    }
  };
};

}  // namespace s3lect::inline v1
