#include "s3lect/config.hpp"

#include "s3lect/record.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace s3lect {
namespace {

using std::chrono::milliseconds;

// S3 caps object keys at 1024 bytes; ids and addresses share the cap so records stay small.
constexpr std::size_t max_text_bytes = 1024;

std::string ms(milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

// "field: must be <rule> (<bound>), is <value>".
std::string broken(std::string_view field, std::string_view rule, milliseconds value) {
  return std::string(field) + ": must be " + std::string(rule) + ", is " + ms(value);
}

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF):
// Boost.JSON refuses anything else when reading a record back.
bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    unsigned min_second = 0x80, max_second = 0xBF;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      extra = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      extra = 2;
      if (lead == 0xE0) min_second = 0xA0;  // overlong
      if (lead == 0xED) max_second = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      extra = 3;
      if (lead == 0xF0) min_second = 0x90;  // overlong
      if (lead == 0xF4) max_second = 0x8F;  // beyond U+10FFFF
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      const unsigned low = k == 1 ? min_second : 0x80;
      const unsigned high = k == 1 ? max_second : 0xBF;
      if (byte < low || byte > high) return false;
    }
    i += extra + 1;
  }
  return true;
}

// Checks a text field: non-empty when `required`, at most max_text_bytes, valid UTF-8.
std::optional<std::string> check_text(std::string_view field, std::string_view value,
                                      bool required) {
  if (required && value.empty()) return std::string(field) + ": must not be empty";
  if (value.size() > max_text_bytes) {
    return std::string(field) + ": must be at most " + std::to_string(max_text_bytes) +
           " bytes, is " + std::to_string(value.size()) + " bytes";
  }
  if (!is_utf8(value)) return std::string(field) + ": must be valid UTF-8";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> elector_config::validate() const {
  if (auto e = check_text("lock_key", lock_key, true)) return e;
  if (auto e = check_text("server_id", server_id, true)) return e;
  if (auto e = check_text("server_address", server_address, peer_mode)) {
    if (server_address.empty()) return "server_address: must not be empty when peer_mode is on";
    return e;
  }

  if (lease <= milliseconds::zero()) return broken("lease", "greater than 0", lease);
  if (lease > max_record_lease) {
    return broken("lease", "at most " + ms(max_record_lease) + " (24 h)", lease);
  }
  if (renew_deadline >= lease) {
    return broken("renew_deadline", "less than lease (" + ms(lease) + ")", renew_deadline);
  }
  if (renew_deadline <= frequent_interval) {
    return broken("renew_deadline",
                  "greater than frequent_interval (" + ms(frequent_interval) + ")", renew_deadline);
  }
  if (frequent_interval <= milliseconds::zero()) {
    return broken("frequent_interval", "greater than 0", frequent_interval);
  }
  if (infrequent_interval < frequent_interval) {
    return broken("infrequent_interval",
                  "at least frequent_interval (" + ms(frequent_interval) + ")",
                  infrequent_interval);
  }
  if (max_clock_skew && *max_clock_skew < milliseconds::zero()) {
    return broken("max_clock_skew", "at least 0 (or nullopt to disable rule (c))", *max_clock_skew);
  }
  if (acquire_grace < milliseconds::zero()) {
    return broken("acquire_grace", "at least 0", acquire_grace);
  }
  if (acquire_grace > lease) {
    return broken("acquire_grace", "at most lease (" + ms(lease) + ")", acquire_grace);
  }
  if (request_timeout <= milliseconds::zero()) {
    return broken("request_timeout", "greater than 0", request_timeout);
  }
  if (auto e = retry.validate()) return "retry." + *e;
  const milliseconds budget = renew_deadline - frequent_interval;
  const milliseconds worst = retry.worst_case(request_timeout);
  if (worst > budget) {
    return "retry: the worst case of one request (" + ms(worst) + ": " +
           std::to_string(retry.delays.size() + 1) + " attempts of request_timeout " +
           ms(request_timeout) + " plus the delays) must fit in renew_deadline - " +
           "frequent_interval (" + ms(budget) + ")";
  }
  if (peer_health_path.empty() || peer_health_path.front() != '/') {
    return "peer_health_path: must start with '/'";
  }
  if (auto e = check_text("peer_health_path", peer_health_path, true)) return e;
  if (peer_timeout <= milliseconds::zero()) {
    return broken("peer_timeout", "greater than 0", peer_timeout);
  }
  if (!peer_client_cert_file.empty() && !peer_client_cert_pem.empty()) {
    return "peer_client_cert_file: set either it or peer_client_cert_pem, not both";
  }
  if (!peer_client_key_file.empty() && !peer_client_key_pem.empty()) {
    return "peer_client_key_file: set either it or peer_client_key_pem, not both";
  }
  const bool has_cert = !peer_client_cert_file.empty() || !peer_client_cert_pem.empty();
  const bool has_key = !peer_client_key_file.empty() || !peer_client_key_pem.empty();
  if (has_cert != has_key) {
    return has_cert ? "peer_client_key_file: a client certificate needs its private key"
                    : "peer_client_cert_file: a private key needs its client certificate";
  }
  return std::nullopt;
}

std::optional<std::string> validate_update(const elector_config& current,
                                           const elector_config& next) {
  if (auto e = next.validate()) return e;
  if (next.lock_key != current.lock_key) return "lock_key: cannot change while running";
  if (next.server_id != current.server_id) return "server_id: cannot change while running";
  return std::nullopt;
}

}  // namespace s3lect
