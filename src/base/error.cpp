#include "s3lect/error.hpp"

#include <string>

namespace s3lect::inline v1 {
namespace {

class category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "s3lect"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::precondition_failed:
        return "precondition failed: the object changed";
      case errc::conflict:
        return "conflicting concurrent write: outcome undecided";
      case errc::outcome_unknown:
        return "conditional write outcome unknown";
      case errc::access_denied:
        return "access denied";
      case errc::signature_mismatch:
        return "signature does not match (wrong secret key?)";
      case errc::invalid_access_key:
        return "invalid access key id";
      case errc::clock_skewed:
        return "request time too skewed from the server's clock";
      case errc::bad_request:
        return "request rejected by the server";
      case errc::no_such_bucket:
        return "no such bucket";
      case errc::server_error:
        return "server error";
      case errc::throttled:
        return "throttled by the server";
      case errc::timeout:
        return "timed out";
      case errc::resolve_failed:
        return "host name resolution failed";
      case errc::connect_failed:
        return "connection failed";
      case errc::connection_lost:
        return "connection lost";
      case errc::protocol_error:
        return "malformed or truncated HTTP reply";
      case errc::body_too_large:
        return "reply body too large";
      case errc::tls_handshake_failed:
        return "TLS handshake failed";
      case errc::tls_verification_failed:
        return "TLS certificate verification failed";
      case errc::invalid_config:
        return "invalid configuration";
      case errc::malformed_record:
        return "malformed lock record";
      case errc::not_leader:
        return "not the leader";
      case errc::stopped:
        return "stopped";
      case errc::fenced_out:
        return "fenced out: a higher term has written the object";
      case errc::unknown_successor:
        return "unknown successor: not a verified candidate of this leader";
    }
    return "unknown s3lect error " + std::to_string(value);
  }
};

}  // namespace

const boost::system::error_category& error_category() noexcept {
  static const category_impl instance;
  return instance;
}

bool is_transient(const boost::system::error_code& ec) noexcept {
  if (ec.category() != error_category()) return false;
  switch (static_cast<errc>(ec.value())) {
    case errc::server_error:
    case errc::throttled:
    case errc::timeout:
    case errc::resolve_failed:
    case errc::connect_failed:
    case errc::connection_lost:
    case errc::protocol_error:
    case errc::tls_handshake_failed:
      return true;
    default:
      return false;
  }
}

}  // namespace s3lect::inline v1
