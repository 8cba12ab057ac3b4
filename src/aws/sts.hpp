// Web identity credentials: STS AssumeRoleWithWebIdentity with a token file (EKS IRSA, GitHub
// Actions OIDC, any OIDC issuer). The request is unsigned: the token is the proof.
#pragma once

#include "credentials_detail.hpp"
#include "http_client.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// The STS endpoint: AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else the regional endpoint of
/// `region` (https://sts.REGION.amazonaws.com, ".com.cn" in China), else https://sts.amazonaws.com.
std::string sts_endpoint(const environment_snapshot& env, std::string_view region);

/// The form-encoded POST of AssumeRoleWithWebIdentity (Host not included).
http_request web_identity_request(std::string_view role_arn, std::string_view session_name,
                                  std::string_view token);

/// Settings of one web identity provider.
struct web_identity_settings {
  std::string role_arn;
  std::string token_file;    ///< read at every fetch: the issuer rotates it
  std::string session_name;  ///< empty: "s3lect-" and the Unix time
  environment_snapshot env;  ///< for the STS endpoint variables
  std::string region;        ///< for the regional STS endpoint; empty: AWS_REGION, ...
  std::chrono::milliseconds http_timeout{2000};
  tls_config tls;                               ///< for https STS endpoints
  std::string provider_label = "web-identity";  ///< names the credentials and messages
};

/// The provider configured by AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN and
/// AWS_ROLE_SESSION_NAME; not configured without the token file variable.
std::shared_ptr<coroutine_provider> make_environment_web_identity_provider(
    boost::asio::any_io_executor executor, const environment_snapshot& env, std::string region,
    std::chrono::milliseconds http_timeout);

/// A provider for explicit settings (the profile provider's role_arn + web_identity_token_file).
std::shared_ptr<coroutine_provider> make_web_identity_provider(
    boost::asio::any_io_executor executor, web_identity_settings settings);

}  // namespace s3lect::inline v1::detail
