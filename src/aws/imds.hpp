// EC2 instance metadata credentials, IMDSv2 only: a session token from
// `PUT /latest/api/token`, then the role name and the role's credentials with that token. There
// is no IMDSv1 fallback: an instance that refuses tokens is reported, not quietly downgraded.
#pragma once

#include "boot_clock.hpp"
#include "credentials_detail.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace s3lect::inline v1::detail {

/// AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://[fd00:ec2::254] when
/// AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE is IPv6, else http://169.254.169.254.
std::string imds_endpoint(const environment_snapshot& env);

/// True when AWS_EC2_METADATA_DISABLED is "true" (any case).
bool imds_disabled(const environment_snapshot& env);

/// The IMDSv2 session token of one provider: reused until shortly before its TTL runs out, by
/// the provider's own monotonic clock (the service's clock is not ours to read).
class imds_token_cache {
 public:
  using clock = boot_clock;

  /// The cached token if it is still good at `now`.
  std::optional<std::string> get(clock::time_point now) const;
  /// Stores a token granted at `now` for `ttl`; it is used until `ttl` minus a margin (a
  /// quarter of the TTL, at most a minute) has passed.
  void put(std::string token, std::chrono::seconds ttl, clock::time_point now);
  /// Forgets the token (the service answered 401).
  void clear();

 private:
  mutable std::mutex mutex_;
  std::string token_;
  clock::time_point good_until_{};
};

/// Settings of the IMDS provider.
struct imds_settings {
  std::string endpoint = "http://169.254.169.254";
  /// True when the endpoint came from AWS_EC2_METADATA_SERVICE_ENDPOINT: then an unreachable
  /// service is an error, not "not on EC2".
  bool endpoint_configured = false;
  bool disabled = false;
  std::chrono::seconds token_ttl{21600};
  std::chrono::milliseconds http_timeout{1000};
};

/// The settings the environment asks for.
imds_settings imds_settings_from(const environment_snapshot& env);

/// Provider "imds". Not configured when disabled, when no metadata service answers at the
/// default address (not on EC2), or when no IAM role is attached to the instance.
std::shared_ptr<coroutine_provider> make_imds_provider(boost::asio::any_io_executor executor,
                                                       imds_settings settings);

}  // namespace s3lect::inline v1::detail
