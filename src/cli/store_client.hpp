// The store a command talks to: an s3_client for s3://BUCKET/KEY, an azure_blob_client for
// az://CONTAINER/BLOB, behind the storage interface, plus the little each command needs beyond
// it (deleting scratch objects, describing the store and its credentials).
#pragma once

#include "cli/store_options.hpp"

#include <s3lect/azure_blob_client.hpp>
#include <s3lect/credentials.hpp>
#include <s3lect/s3_client.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>
#include <tuple>

namespace s3lect::cli {

class store_client {
 public:
  /// Throws boost::system::system_error(errc::invalid_config) as the clients do.
  store_client(boost::asio::any_io_executor executor, const store_target& target);

  /// The client as a storage.
  storage& store() noexcept;
  operator storage&() noexcept { return store(); }  // NOLINT: a store_client is its storage

  /// True for Azure Blob Storage.
  bool is_azure() const noexcept { return azure_ != nullptr; }
  /// The endpoint requests go to, for messages.
  const std::string& endpoint() const noexcept;
  /// "(region R)" or "(account A)": what, besides the endpoint, says which store this is.
  std::string scope() const;
  /// Which credentials sign the requests (never a secret).
  std::string credentials_description() const;

  /// Another client on the same store, with its own connections (as another process would
  /// have) and, for S3 without explicit keys, the default credential chain of its own.
  std::unique_ptr<store_client> sibling() const;

  /// Deletes `key`; a missing object is success.
  boost::asio::awaitable<std::tuple<boost::system::error_code, response_info>> remove(
      std::string key);

 private:
  boost::asio::any_io_executor executor_;
  store_target target_;
  std::unique_ptr<s3_client> s3_;
  std::unique_ptr<azure_blob_client> azure_;
  mutable std::shared_ptr<credentials_provider> siblings_provider_;  ///< made by sibling()
};

}  // namespace s3lect::cli
