#include "cli/store_client.hpp"

#include <s3lect/credentials.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace s3lect::cli {
namespace {

namespace asio = boost::asio;

/// Which provider supplied the AWS credentials, with the key id masked and never the secret.
std::string describe_aws_credentials(const credentials_origin& origin) {
  if (origin.provider.empty()) return "credentials: none obtained";
  const std::string& id = origin.access_key_id;
  std::string line = "credentials: from " + origin.provider + " (access key id ****" +
                     (id.size() > 4 ? id.substr(id.size() - 4) : std::string()) + ", ";
  if (!origin.expiration) return line + "long-term)";
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(
      *origin.expiration - std::chrono::system_clock::now());
  return line + "temporary, expire in " + std::to_string(minutes.count()) + " min)";
}

}  // namespace

store_client::store_client(asio::any_io_executor executor, const store_target& target)
    : executor_(std::move(executor)), target_(target) {
  if (target.azure) {
    azure_ = std::make_unique<azure_blob_client>(executor_, *target.azure);
  } else {
    s3_ = std::make_unique<s3_client>(executor_, target.config);
  }
}

storage& store_client::store() noexcept {
  if (azure_) return *azure_;
  return *s3_;
}

const std::string& store_client::endpoint() const noexcept {
  return azure_ ? azure_->config().endpoint : s3_->config().endpoint;
}

std::string store_client::scope() const {
  if (azure_) return "(account " + azure_->config().account + ")";
  return "(region " + s3_->config().region + ")";
}

std::string store_client::credentials_description() const {
  if (s3_) return describe_aws_credentials(s3_->credentials_in_use());
  const azure_blob_config& config = azure_->config();
  return config.account_key.empty()
             ? "credentials: a shared access signature (SAS)"
             : "credentials: the account key (Shared Key) of " + config.account;
}

std::unique_ptr<store_client> store_client::sibling() const {
  store_target target = target_;
  if (s3_) {
    target.config = s3_->config();
    // One credential source for all siblings, so that the chain is walked once.
    if (target.config.creds.access_key_id.empty() && !target.config.creds_provider) {
      if (!siblings_provider_) siblings_provider_ = make_default_credentials_chain(executor_);
      target.config.creds_provider = siblings_provider_;
    }
  }
  return std::make_unique<store_client>(executor_, target);
}

asio::awaitable<std::tuple<boost::system::error_code, response_info>> store_client::remove(
    std::string key) {
  if (azure_)
    co_return co_await azure_->async_delete(std::move(key), asio::as_tuple(asio::use_awaitable));
  co_return co_await s3_->async_delete(std::move(key), asio::as_tuple(asio::use_awaitable));
}

}  // namespace s3lect::cli
