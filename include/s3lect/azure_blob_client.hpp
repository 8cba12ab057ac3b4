// s3lect's own Azure Blob Storage client: Get Blob and conditional Put Blob (Put Block and a
// conditional Put Block List for bodies above Put Blob's limit) over HTTP or HTTPS,
// Shared Key or SAS, on the caller's executor. The same storage as s3_client, so the elector,
// fenced objects and peer mode run on a container as on a bucket. Beast and OpenSSL stay inside
// src/.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/azure_credentials.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/storage.hpp>
#include <s3lect/tls.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1 {

/// Configuration of an azure_blob_client. Nothing is read from the environment unless asked
/// for: from_environment() is the explicit way.
///
/// Authorisation, the first that is set: Shared Key (`account_key`), the SAS token in
/// `sas_token`, else a Microsoft Entra ID bearer token from `token_provider` (or from
/// make_azure_default_token_chain() when `use_default_token_chain` is set). Requests are made for
/// the Storage REST API version 2025-01-05 (`x-ms-version`), which Azure and Azurite 3.33 and
/// later serve; bearer tokens need 2017-11-09 or later.
struct azure_blob_config {
  std::string container;  ///< The container that holds the lock blob.
  /// The blob service URL: `https://ACCOUNT.blob.core.windows.net` (the default when empty), or
  /// an emulator's, whose path names the account: `http://127.0.0.1:10000/devstoreaccount1`.
  std::string endpoint;
  /// The storage account's name; may stay empty with a SAS and an endpoint.
  std::string account;
  std::string account_key;  ///< Its access key (base64) for Shared Key; never logged.
  /// A shared access signature (`sv=...&sig=...`, with or without a leading '?'), used when
  /// `account_key` is empty; never logged. It needs read, create and write permissions on the
  /// container's blobs (delete too for s3lect's scratch objects).
  std::string sas_token;
  /// An Azure connection string (`AccountName=...;AccountKey=...;BlobEndpoint=...`, or
  /// `UseDevelopmentStorage=true` for Azurite's defaults). It fills the fields above that are
  /// empty; the fields set explicitly win. Never logged.
  std::string connection_string;
  /// Entra ID tokens (audience https://storage.azure.com/), used when neither `account_key` nor
  /// `sas_token` is set: every request carries `Authorization: Bearer`. The client caches the
  /// token and refreshes it in the background five minutes before expiry; a request waits only
  /// when no usable token exists, and fails with the provider's credentials_errc and message when
  /// the fetch fails. A 401, or a 403 AuthenticationFailed or InvalidAuthenticationInfo, drops
  /// the cached token. The identity needs a data role on the container, e.g. "Storage Blob Data
  /// Contributor".
  std::shared_ptr<azure_token_provider> token_provider;
  /// With no key, SAS or token_provider: the client makes make_azure_default_token_chain() on its
  /// own executor (workload identity, else managed identity). from_environment() sets it when it
  /// finds no connection string, key or SAS.
  bool use_default_token_chain = false;
  tls_config tls;  ///< TLS to the endpoint (CAs, client certificate).
  /// Bound on one attempt: resolve, connect, handshake, write and read. 0 disables it. For a
  /// streamed body it bounds a stall: it restarts while bytes flow.
  std::chrono::milliseconds request_timeout{5000};
  /// A GET reads at most this much of a body: beyond it the object comes back `truncated`.
  std::size_t max_body_bytes = 1024 * 1024;
  /// Idle keep-alive connections kept for reuse.
  std::size_t max_idle_connections = 4;
  /// A PUT body larger than this does not go in one Put Blob (which takes up to 5,000 MiB, the
  /// default and the most allowed) but as blocks of `block_bytes`, one Put Block each, one after
  /// the other, then one Put Block List carrying the condition and the metadata: the blob
  /// changes at that commit only, all at once, and a lost condition leaves it as it was.
  std::uint64_t max_put_blob_bytes = 5000ull * 1024 * 1024;
  /// The size of each block of such a body, at most 4,000 MiB. A body that would need more than
  /// the 50,000 blocks a blob takes gets larger blocks; one over 50,000 blocks of 4,000 MiB is
  /// refused before anything is sent.
  std::uint64_t block_bytes = 100ull * 1024 * 1024;
  logger log;  ///< Where the client logs.

  /// A configuration for `container` from the variables the Azure CLI reads:
  /// AZURE_STORAGE_CONNECTION_STRING, else AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or
  /// AZURE_STORAGE_SAS_TOKEN. When none of the three credentials is set, Entra ID is used
  /// (`use_default_token_chain`), as the Azure SDKs' DefaultAzureCredential does: AKS workload
  /// identity when AZURE_FEDERATED_TOKEN_FILE is set (with AZURE_CLIENT_ID, AZURE_TENANT_ID),
  /// else managed identity; the account still comes from AZURE_STORAGE_ACCOUNT. The endpoint is
  /// the connection string's BlobEndpoint, else Azure's for the account; set `endpoint` to name
  /// another.
  static azure_blob_config from_environment(std::string container);

  /// This configuration with `connection_string` applied to the empty fields. Returns nullopt
  /// with `problem` set when the connection string is malformed.
  std::optional<azure_blob_config> resolved(std::string& problem) const;

  /// Returns nullopt when valid (after the connection string is applied), else
  /// "field: what is wrong" naming the first offending field.
  std::optional<std::string> validate() const;

  /// True when the store's answers are authenticated (storage::answers_authenticated()): the
  /// endpoint is https://, or http:// to a loopback IP literal. An empty endpoint is Azure's,
  /// which is https://.
  bool answers_authenticated() const;
};

/// Counters of one Azure client, for tests, benchmarks and metrics.
struct azure_blob_client_stats {
  std::uint64_t gets = 0;         ///< GETs sent.
  std::uint64_t puts = 0;         ///< PUTs sent.
  std::uint64_t deletes = 0;      ///< DELETEs sent.
  std::uint64_t failures = 0;     ///< Requests that completed with an error other than a lost
                                  ///< condition (409 BlobAlreadyExists, 412).
  std::uint64_t connections = 0;  ///< TCP connections opened.
};

/// An Azure Blob Storage client: each key is a block blob in the configured container.
/// Thread-safe; any number of requests may be outstanding, each on its own keep-alive connection
/// from a small pool. Must outlive its pending operations.
///
/// How Azure's answers map onto the storage contract: a create-only PUT (`If-None-Match: *`)
/// that finds a blob gets 409 BlobAlreadyExists and completes with errc::precondition_failed,
/// as 412 ConditionNotMet does; 404 ContainerNotFound is errc::no_such_bucket;
/// 403 AuthenticationFailed is errc::signature_mismatch and the other 403s errc::access_denied,
/// with the server's message in response_info; 500 OperationTimedOut and 503 ServerBusy are
/// transient (a PUT's outcome is then unknown). `x-ms-request-id` is the request id.
///
/// Metadata names are C# identifiers on Azure: a name's '-' is sent as '_' and read back as '-',
/// so a name given with '_' is refused: the PUT completes with asio::error::invalid_argument
/// before anything is sent.
class azure_blob_client final : public storage {
 public:
  /// Resolves the connection string and validates; throws boost::system::system_error
  /// (errc::invalid_config) naming the offending field. Reads no environment variable.
  azure_blob_client(executor_type executor, azure_blob_config config);
  ~azure_blob_client() override;
  azure_blob_client(const azure_blob_client&) = delete;
  azure_blob_client& operator=(const azure_blob_client&) = delete;

  executor_type get_executor() const override;
  /// config().answers_authenticated().
  bool answers_authenticated() const noexcept override;

  /// The configuration with the connection string applied.
  const azure_blob_config& config() const noexcept;

  /// Snapshot of the counters.
  azure_blob_client_stats stats() const;

  /// Deletes the blob `key` (used to clean up scratch objects). Completes with
  /// `void(error_code, response_info)`; a missing blob is success. Cancellation: terminal.
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
    azure_blob_client* self;
    template <class Handler>
    void operator()(Handler&& handler, std::string key) const {
      self->delete_impl(std::move(key), delete_handler(std::forward<Handler>(handler)));
    }
  };

  std::shared_ptr<impl> impl_;
};

}  // namespace s3lect::inline v1
