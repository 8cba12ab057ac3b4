// An in-memory storage with S3's conditional-write semantics and injectable faults: latency,
// partitions, lost replies, 5xx after a committed write, 409 conflicts, Ceph's 500-for-412.
// For s3lect's unit tests and for users testing their own code on top of an elector.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/error.hpp>
#include <s3lect/storage.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1 {

namespace detail {
class manual_clock;
}

/// Counters of a memory_store: what reached the bucket, whichever view sent it.
struct memory_store_stats {
  std::uint64_t gets = 0;                   ///< GETs that reached the store.
  std::uint64_t puts = 0;                   ///< Conditional PUTs that reached the store.
  std::uint64_t commits = 0;                ///< Conditional PUTs whose condition held.
  std::uint64_t precondition_failures = 0;  ///< Conditional PUTs whose condition did not hold.
  std::uint64_t pokes = 0;                  ///< Unconditional writes through poke().
};

/// The outcome of a conditional write applied to a memory_store.
struct memory_write_outcome {
  /// How the store judged the write.
  enum class verdict {
    committed,       ///< The condition held; `etag` is the new ETag.
    already_exists,  ///< if_absent, but an object exists (S3: 412 PreconditionFailed).
    no_such_key,     ///< if_match, but no object exists (AWS: 404 NoSuchKey, Ceph: 412).
    etag_mismatch,   ///< if_match, but the object has another ETag (S3: 412).
  };
  verdict result = verdict::committed;  ///< The verdict.
  std::string etag;                     ///< The new ETag when committed.
};

/// The bucket shared by any number of memory_storage views (one per simulated node).
/// Thread-safe. ETags are computed like S3's for simple PUTs: the hex MD5 of the body, so two
/// identical bodies get identical ETags and a writer that forgets its nonce is caught.
class memory_store {
 public:
  /// The ETag S3 gives an object with this body (32 lowercase hex digits, unquoted). Throws
  /// std::runtime_error when OpenSSL offers no MD5 (a FIPS-only configuration).
  static std::string etag_of(std::string_view body);

  /// The object at `key`, without counting a GET (for test assertions).
  std::optional<object> peek(std::string_view key) const;

  /// Writes `body` at `key` unconditionally and returns the new ETag: another writer (a Go node,
  /// an operator) that ignores conditions. The object's Last-Modified is the store's time now,
  /// or `last_modified` when given (a record written long ago).
  std::string poke(std::string key, std::string body,
                   std::optional<std::chrono::system_clock::time_point> last_modified = {});

  /// Removes the object at `key`, if any.
  void erase(std::string_view key);

  /// A GET reaching the store: the object at `key`, counted in stats().gets.
  std::optional<object> get(std::string_view key);

  /// A conditional PUT reaching the store: writes `body` at `key` with `metadata` only if
  /// `condition` holds, atomically with the check.
  memory_write_outcome put(std::string key, std::string body, const put_condition& condition,
                           object_metadata metadata = {});

  /// Snapshot of the counters.
  memory_store_stats stats() const;

  /// Sets how far the store's clock runs ahead of this machine's (negative: behind).
  void set_clock_offset(std::chrono::system_clock::duration ahead);
  /// The store's clock as its headers show it: this machine's clock plus the offset, truncated
  /// to the second. Stamps Last-Modified on every write and Date on every answer.
  std::chrono::system_clock::time_point now() const;

 private:
  friend class memory_storage;  // Makes the store follow a unit test's manual clock.

  mutable std::mutex mutex_;
  std::chrono::system_clock::duration clock_offset_{0};
  const detail::manual_clock* manual_clock_ = nullptr;  // "This machine's clock" when set.
  std::map<std::string, object, std::less<>> objects_;
  memory_store_stats stats_;
};

/// Faults injected into one memory_storage view. The fate of a request is decided when it
/// starts, from the faults in force then: changing them later does not affect requests in
/// flight. Counters are consumed in the order requests start; a request consumes at most one
/// of them, checked in the order fail_next, conflict_next, commit_then_fail_next,
/// lose_next_replies. A partitioned request consumes none.
struct memory_faults {
  /// Each request waits this long before reaching the store, and again before its reply.
  std::chrono::milliseconds latency{0};
  /// Requests never reach the store and never answer: they hang until the request timeout
  /// (errc::timeout, for a PUT too: the client knows it never got through) or cancellation.
  bool partitioned = false;
  /// The next N requests fail with `fail_with` without reaching the store. Reported as
  /// s3_client would: errc::server_error (a 500) and errc::throttled (a 503 SlowDown) on a PUT
  /// become errc::outcome_unknown; the store's refusals (errc::no_such_bucket, access_denied,
  /// signature_mismatch, invalid_access_key, bad_request) carry S3's status and error code in
  /// the response_info (e.g. 404 "NoSuchBucket"); other codes are local failures (status 0).
  int fail_next = 0;
  /// The error those requests fail with.
  boost::system::error_code fail_with = errc::server_error;
  /// The next N PUTs are applied to the store, then answer errc::outcome_unknown (500 after the
  /// write committed, or after it was refused: the client cannot tell which).
  int commit_then_fail_next = 0;
  /// The next N requests take effect, then their reply is lost: they hang until the request
  /// timeout (a GET: errc::timeout; a PUT: errc::outcome_unknown) or cancellation.
  int lose_next_replies = 0;
  /// The next N PUTs answer errc::conflict (409 ConditionalRequestConflict) without writing.
  int conflict_next = 0;
  /// Ceph quirk: a PUT whose condition does not hold answers errc::outcome_unknown (500
  /// UnknownError) instead of errc::precondition_failed. The write did not happen.
  bool race_losers_get_500 = false;
};

namespace detail {
struct memory_storage_state;
}  // namespace detail

/// Counters of one memory_storage view: what this node sent and how it ended.
struct memory_storage_stats {
  std::uint64_t gets = 0;             ///< GETs started.
  std::uint64_t puts = 0;             ///< PUTs started.
  std::uint64_t failures = 0;         ///< Requests completed with an error other than 412.
  std::uint64_t timeouts = 0;         ///< Requests whose request timeout expired.
  std::uint64_t cancellations = 0;    ///< Requests completed with asio::error::operation_aborted.
  std::uint64_t faults_injected = 0;  ///< Requests that consumed a fault or were partitioned.
};

/// One node's view of a memory_store, with its own faults and request timeout. Answers exactly
/// as s3_client does: a missing key is a successful GET with `found == nullopt`; a refused
/// condition is errc::precondition_failed; a successful PUT returns the new ETag; response_info
/// carries the HTTP status and S3 error code. Thread-safe. Handlers never run inside the
/// initiating function; they run on their associated executor, by default the view's executor.
/// Cancellation: terminal; the request completes with asio::error::operation_aborted at once,
/// and a PUT that already reached the store stays committed. Other cancellation types are ignored.
/// Destroying the view completes its pending requests with errc::stopped (a PUT that reached the
/// store stays committed); the executor's context must outlive the view, as for any I/O object.
class memory_storage final : public storage {
 public:
  /// A view of `store` whose requests run on `executor`. `request_timeout` bounds each request:
  /// as with s3_client, a GET then fails with errc::timeout, a PUT with errc::outcome_unknown
  /// (errc::timeout if partitioned). Zero lets a hung request wait until cancelled. Throws
  /// std::invalid_argument for a null store or a negative timeout.
  memory_storage(executor_type executor, std::shared_ptr<memory_store> store,
                 std::chrono::milliseconds request_timeout = std::chrono::milliseconds{0});
  ~memory_storage() override;
  memory_storage(const memory_storage&) = delete;
  memory_storage& operator=(const memory_storage&) = delete;

  executor_type get_executor() const override;
  /// True: in-process, nobody can answer in its place.
  bool answers_authenticated() const noexcept override { return true; }

  /// The shared bucket.
  const std::shared_ptr<memory_store>& store() const noexcept;

  /// Replaces the faults for requests started from now on.
  void set_faults(const memory_faults& faults);
  /// The faults in force, with the counters as far as consumed.
  memory_faults faults() const;

  /// Snapshot of the counters.
  memory_storage_stats stats() const;
  /// Requests started and not yet completed.
  std::size_t pending() const;

 protected:
  void get_impl(std::string key,
                boost::asio::any_completion_handler<get_signature> handler) override;
  void put_impl(std::string key, std::string body, put_condition condition,
                boost::asio::any_completion_handler<put_signature> handler) override;
  void put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                              object_metadata metadata,
                              boost::asio::any_completion_handler<put_signature> handler) override;

 private:
  std::shared_ptr<memory_store> store_;
  // Shared with the requests in flight, so that they may outlive the view.
  std::shared_ptr<detail::memory_storage_state> state_;
};

}  // namespace s3lect::inline v1
