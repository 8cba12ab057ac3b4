// s3lect's own S3 client: GET and conditional PUT over HTTP or HTTPS, SigV4-signed, on the
// caller's executor. Beast and OpenSSL stay inside src/.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/credentials.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/storage.hpp>
#include <s3lect/tls.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace s3lect::inline v1 {

/// Static AWS credentials (the name s3_config has always used for them).
using credentials = aws_credentials;

/// How the bucket is put in request URLs.
enum class addressing_style {
  automatic,       ///< Virtual-hosted for AWS endpoints when the bucket name allows it, else path.
  path,            ///< https://endpoint/BUCKET/KEY
  virtual_hosted,  ///< https://BUCKET.endpoint/KEY
};

/// Configuration of an s3_client. Empty fields are filled by apply_environment().
struct s3_config {
  std::string bucket;  ///< The bucket that holds the lock record.
  /// `http://host[:port]` or `https://host[:port]`. Empty: AWS_ENDPOINT_URL_S3, then
  /// AWS_ENDPOINT_URL, then the region's AWS endpoint `https://s3.REGION.amazonaws.com`
  /// (`.amazonaws.com.cn` for cn- regions).
  std::string endpoint;
  /// Signing region. Empty: AWS_REGION, then AWS_DEFAULT_REGION, then `region` of the profile in
  /// the AWS config file (AWS_PROFILE, else default). If still empty, "us-east-1" for a custom
  /// endpoint (MinIO, Ceph: they rarely check it); for an AWS endpoint validate() fails, since a
  /// wrong region there means every request is refused.
  std::string region;
  /// How the bucket appears in request URLs.
  addressing_style addressing = addressing_style::automatic;
  /// Explicit keys; they win over everything else and are used as given (an expiration set
  /// here is reported, not acted on). Empty access key id: AWS_ACCESS_KEY_ID,
  /// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (apply_environment() copies them, with provider
  /// "environment"); if those are unset too, `creds_provider`.
  credentials creds;
  /// Where credentials come from when `creds` is empty; null: make_default_credentials_chain()
  /// (web identity, shared profile files, container endpoint, EC2 instance metadata). The client
  /// caches what it returns and refreshes it in the background ahead of expiry.
  std::shared_ptr<credentials_provider> creds_provider;
  tls_config tls;  ///< TLS to the endpoint (CAs, client certificate).
  /// Bound on one attempt: resolve, connect, handshake, write and read. 0 disables it. For a
  /// streamed body (async_get_to, async_put_file) it bounds a stall: it restarts while bytes
  /// flow, so a transfer of any size may take longer.
  std::chrono::milliseconds request_timeout{5000};
  /// A GET reads at most this much of a body: beyond it the read stops and the object comes
  /// back with `truncated` set (lock records are small). async_get_to streams without limit.
  std::size_t max_body_bytes = 1024 * 1024;
  /// Idle keep-alive connections kept for reuse.
  std::size_t max_idle_connections = 4;
  logger log;  ///< Where the client logs.

  /// Fills empty endpoint, region and credentials from the standard AWS environment variables
  /// and the region from the AWS config file (see the fields).
  void apply_environment();
  /// Returns nullopt when valid, else "field: what is wrong" naming the first offending field.
  std::optional<std::string> validate() const;
  /// True when the store's answers are authenticated (storage::answers_authenticated()): the
  /// endpoint is https://, or http:// to a loopback IP literal (127.0.0.0/8, [::1]), whose
  /// traffic never leaves the host. An empty endpoint counts as AWS's, which is https://.
  bool answers_authenticated() const;
};

/// Counters of one client, for tests, benchmarks and metrics.
struct s3_client_stats {
  std::uint64_t gets = 0;         ///< GETs sent.
  std::uint64_t puts = 0;         ///< PUTs sent.
  std::uint64_t deletes = 0;      ///< DELETEs sent.
  std::uint64_t failures = 0;     ///< Requests that completed with an error other than 412.
  std::uint64_t connections = 0;  ///< TCP connections opened.
};

/// An S3 client. Thread-safe; any number of requests may be outstanding and each uses its own
/// keep-alive connection from a small pool. Must outlive its pending operations.
///
/// Credentials: explicit keys sign every request as they are. Otherwise the provider's
/// credentials are cached and requests sign with them without waiting; once they are within
/// five minutes of expiry the next request starts a refresh in the background (a failed
/// refresh is logged and the current credentials stay in use until they expire). A request
/// waits for a fetch only when no usable credentials exist: the first request, or one after an
/// idle period longer than those five minutes. That wait counts against request_timeout. A
/// failed fetch fails the request with a s3lect::credentials_errc and a message naming the
/// provider and the problem; the next request may try again a second later.
class s3_client final : public storage {
 public:
  /// Resolves `config` against the environment and validates it; throws
  /// boost::system::system_error (errc::invalid_config) naming the offending field.
  s3_client(executor_type executor, s3_config config);
  ~s3_client() override;
  s3_client(const s3_client&) = delete;
  s3_client& operator=(const s3_client&) = delete;

  executor_type get_executor() const override;
  /// config().answers_authenticated().
  bool answers_authenticated() const noexcept override;

  /// The configuration after apply_environment().
  const s3_config& config() const noexcept;

  /// Snapshot of the counters.
  s3_client_stats stats() const;

  /// Which provider supplied the credentials in use (never the secret). With a provider the
  /// fields are empty until the first request fetched credentials.
  credentials_origin credentials_in_use() const;

  /// Deletes `key` (used to clean up scratch objects). Completes with
  /// `void(error_code, response_info)`; a missing object is success. Cancellation: terminal.
  template <class CompletionToken = default_token>
  auto async_delete(std::string key, CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken,
                                       void(boost::system::error_code, response_info)>(
        initiate_delete{this}, token, std::move(key));
  }

  /// Closes idle keep-alive connections.
  void close_idle_connections();

 protected:
  void get_impl(std::string key,
                boost::asio::any_completion_handler<get_signature> handler) override;
  void put_impl(std::string key, std::string body, put_condition condition,
                boost::asio::any_completion_handler<put_signature> handler) override;
  void put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                              object_metadata metadata,
                              boost::asio::any_completion_handler<put_signature> handler) override;
  void get_to_impl(std::string key, body_sink sink, std::string if_etag,
                   boost::asio::any_completion_handler<get_signature> handler) override;
  void get_head_impl(std::string key, std::size_t max_bytes,
                     boost::asio::any_completion_handler<get_signature> handler) override;
  void put_file_impl(std::string key, file_body body, put_condition condition,
                     object_metadata metadata,
                     boost::asio::any_completion_handler<put_signature> handler) override;

 private:
  struct impl;
  using delete_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, response_info)>;
  void delete_impl(std::string key, delete_handler handler);

  struct initiate_delete {
    s3_client* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key) const {
      self->delete_impl(std::move(key), delete_handler(std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<impl> impl_;
};

}  // namespace s3lect::inline v1
