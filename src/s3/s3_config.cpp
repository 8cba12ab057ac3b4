// s3_config: filling from the AWS environment variables, and validation.
#include <s3lect/s3_client.hpp>

#include "aws_profile.hpp"
#include "s3_endpoint.hpp"

#include <boost/asio/ip/address.hpp>

#include <cstdlib>
#include <string>

namespace s3lect::inline v1 {
namespace {

/// The variable's value; unset and empty are the same, as in the AWS SDKs.
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

void fill_if_empty(std::string& field, const char* variable) {
  if (field.empty()) field = environment(variable);
}

bool has_space_or_control(std::string_view s) {
  for (unsigned char c : s) {
    if (c <= ' ' || c == 0x7f) return true;
  }
  return false;
}

/// True when requests would go to AWS: no endpoint yet (the regional one will be used), or an
/// amazonaws.com host. An unparsable endpoint counts as custom; validate() reports it.
bool targets_aws(const std::string& endpoint) {
  if (endpoint.empty()) return true;
  std::string problem;
  const auto url = detail::parse_endpoint_url(endpoint, problem);
  return url && !url->host_is_ip() && detail::is_aws_host(url->host);
}

}  // namespace

void s3_config::apply_environment() {
  fill_if_empty(region, "AWS_REGION");
  fill_if_empty(region, "AWS_DEFAULT_REGION");
  if (region.empty()) region = detail::profile_region(detail::environment_snapshot::capture());

  fill_if_empty(endpoint, "AWS_ENDPOINT_URL_S3");
  fill_if_empty(endpoint, "AWS_ENDPOINT_URL");
  // Custom stores (MinIO, Ceph) rarely check the signing region; AWS refuses a wrong one, so
  // there a missing region is left for validate() to report instead of guessing us-east-1.
  if (region.empty() && !targets_aws(endpoint)) region = "us-east-1";
  if (endpoint.empty() && !region.empty() && !has_space_or_control(region) &&
      region.find('/') == std::string::npos) {
    endpoint = "https://s3." + region +
               (region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com");
  }

  // A key pair is taken whole: mixing a configured key id with another identity's secret or
  // session token from the environment could only produce signature errors.
  if (creds.access_key_id.empty()) {
    creds.access_key_id = environment("AWS_ACCESS_KEY_ID");
    fill_if_empty(creds.secret_access_key, "AWS_SECRET_ACCESS_KEY");
    fill_if_empty(creds.session_token, "AWS_SESSION_TOKEN");
    if (!creds.access_key_id.empty() && creds.provider.empty()) creds.provider = "environment";
  }
}

bool s3_config::answers_authenticated() const {
  if (endpoint.empty()) return true;  // AWS's regional endpoint, https://
  std::string problem;
  const auto url = detail::parse_endpoint_url(endpoint, problem);
  if (!url) return false;
  if (url->tls) return true;
  // Plain HTTP: only when the traffic never leaves this host.
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(url->host, ec);
  return !ec && address.is_loopback();
}

std::optional<std::string> s3_config::validate() const {
  if (bucket.empty()) return "bucket: must not be empty";
  if (const std::string problem = detail::bucket_name_problem(bucket); !problem.empty()) {
    return "bucket: " + problem;
  }

  if (region.empty() && targets_aws(endpoint)) {
    return "region: not set, and AWS needs the bucket's region: set it in the configuration "
           "(--region), AWS_REGION, AWS_DEFAULT_REGION, or `region` in the profile of the AWS "
           "config file";
  }
  if (endpoint.empty()) return "endpoint: must not be empty (call apply_environment())";
  std::string problem;
  const auto url = detail::parse_endpoint_url(endpoint, problem);
  if (!url) return "endpoint: " + problem;

  // The region is part of the signing scope "date/region/s3/aws4_request".
  if (region.empty()) return "region: must not be empty (call apply_environment())";
  if (has_space_or_control(region) || region.find('/') != std::string::npos) {
    return "region: must not contain '/', spaces or control characters";
  }

  if (addressing == addressing_style::virtual_hosted) {
    if (url->host_is_ip()) return "addressing: virtual-hosted style needs a host name endpoint";
    if (!detail::virtual_host_compatible(bucket, url->tls)) {
      return "addressing: virtual-hosted style needs a bucket name without dots over HTTPS";
    }
  }

  // Both empty: creds_provider or the default chain supplies them. Half a key pair is a mistake.
  if (creds.access_key_id.empty() && !creds.secret_access_key.empty()) {
    return "creds.access_key_id: must not be empty when a secret access key is given";
  }
  if (!creds.access_key_id.empty() && creds.secret_access_key.empty()) {
    return "creds.secret_access_key: must not be empty when an access key id is given";
  }
  // These travel in headers: a newline would split the request.
  if (has_space_or_control(creds.access_key_id) ||
      creds.access_key_id.find('/') != std::string::npos) {
    return "creds.access_key_id: must not contain '/', spaces or control characters";
  }
  if (has_space_or_control(creds.session_token)) {
    return "creds.session_token: must not contain spaces or control characters";
  }

  if (request_timeout.count() < 0) return "request_timeout: must not be negative (0 disables it)";
  if (max_body_bytes == 0) return "max_body_bytes: must be positive";
  if (url->tls && !tls.verify_peer && (!tls.ca_file.empty() || !tls.ca_pem.empty())) {
    return "tls.verify_peer: is off although a CA is configured";
  }
  return std::nullopt;
}

}  // namespace s3lect::inline v1
