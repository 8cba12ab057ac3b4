// Validation of the health endpoint's settings: shape only, no file or socket access.
#include <s3lect/health.hpp>

#include "health_protocol.hpp"
#include "listener_settings.hpp"

#include <boost/asio/ip/address.hpp>

#include <string>

namespace s3lect::inline v1 {

namespace {

using std::chrono::milliseconds;

std::string ms(milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

/// "exactly one of a file or PEM text" for the certificate and its key.
std::optional<std::string> one_source(const std::string& file, const std::string& pem,
                                      const char* file_field, const char* pem_field) {
  if (file.empty() == pem.empty()) {
    return std::string(file_field) + ": set exactly one of " + file_field + " and " + pem_field;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> health_handler_config::validate() const {
  if (path.empty() || path.front() != '/') return "path: must start with '/', is '" + path + "'";
  if (path.find_first_of("?# \t\r\n") != std::string::npos) {
    return "path: must not contain '?', '#' or whitespace, is '" + path + "'";
  }
  if (max_watch < milliseconds::zero())
    return "max_watch: must not be negative, is " + ms(max_watch);
  return std::nullopt;
}

std::optional<std::string> health_server_config::validate() const {
  const auto parts = detail::split_bind_address(bind_address);
  if (!parts) {
    return "bind_address: must be 'IP:port' or '[IPv6]:port', is '" + bind_address + "'";
  }
  boost::system::error_code ec;
  boost::asio::ip::make_address(std::string(parts->host), ec);
  if (ec) return "bind_address: '" + std::string(parts->host) + "' is not an IP address";
  // None of the four: zero-configuration TLS, the constructor makes the identity.
  const bool self_signed = tls.certificate_file.empty() && tls.certificate_pem.empty() &&
                           tls.private_key_file.empty() && tls.private_key_pem.empty();
  if (auto error = self_signed ? std::nullopt
                               : one_source(tls.certificate_file, tls.certificate_pem,
                                            "tls.certificate_file", "tls.certificate_pem")) {
    return error;
  }
  if (auto error = self_signed ? std::nullopt
                               : one_source(tls.private_key_file, tls.private_key_pem,
                                            "tls.private_key_file", "tls.private_key_pem")) {
    return error;
  }
  if (tls.require_client_cert && tls.ca_file.empty() && tls.ca_pem.empty()) {
    return "tls.require_client_cert: needs tls.ca_file or tls.ca_pem";
  }
  // Below 1 KiB ordinary clients fail; above 1 MiB the limit no longer protects memory.
  if (max_header_bytes < 1024 || max_header_bytes > 1024 * 1024) {
    return "max_header_bytes: must be between 1024 and 1048576, is " +
           std::to_string(max_header_bytes);
  }
  if (read_timeout <= milliseconds::zero()) {
    return "read_timeout: must be positive, is " + ms(read_timeout);
  }
  if (idle_timeout <= milliseconds::zero()) {
    return "idle_timeout: must be positive, is " + ms(idle_timeout);
  }
  if (auto error = detail::check_connection_limits(*this)) return error;
  if (auto error = handler.validate()) return "handler." + *error;
  if (metrics && handler.path == metrics_path) {
    return "handler.path: " + handler.path + " is the metrics route; choose another path";
  }
  return std::nullopt;
}

}  // namespace s3lect::inline v1
