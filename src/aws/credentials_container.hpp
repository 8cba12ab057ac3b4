// Container credentials: the ECS task role endpoint and EKS Pod Identity, both configured by
// AWS_CONTAINER_CREDENTIALS_* variables and answering with the same JSON document.
#pragma once

#include "credentials_detail.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace s3lect::inline v1::detail {

/// Where the container credentials are and how to ask for them, as the environment says.
struct container_endpoint {
  bool configured = false;
  std::string url;         ///< absolute URL
  std::string problem;     ///< non-empty when configured but unusable: "container: ..."
  std::string token_file;  ///< AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, read at every fetch
  std::string token;       ///< AWS_CONTAINER_AUTHORIZATION_TOKEN, when there is no token file
};

/// AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on http://169.254.170.2) wins over _FULL_URI. A full
/// URI must be https, or http to a loopback address, the ECS address 169.254.170.2 or the EKS
/// Pod Identity agent (169.254.170.23, fd00:ec2::23): credentials never cross a network in the
/// clear.
container_endpoint container_endpoint_from(const environment_snapshot& env);

/// Provider "container"; not configured without either URI variable.
std::shared_ptr<coroutine_provider> make_container_provider(boost::asio::any_io_executor executor,
                                                            container_endpoint endpoint,
                                                            std::chrono::milliseconds http_timeout);

}  // namespace s3lect::inline v1::detail
