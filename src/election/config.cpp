#include "s3lect/config.hpp"

#include "s3lect/record.hpp"
#include "s3lect/s3_client.hpp"
#include "s3lect/storage.hpp"

#include "candidate_registration.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace s3lect::inline v1 {
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

// The intervals and deadlines: L > D > F > 0, I >= F, and the retry policy's worst case W fits
// in D - F.
std::optional<std::string> validate_timing(const elector_config& c) {
  if (c.lease <= milliseconds::zero()) return broken("lease", "greater than 0", c.lease);
  if (c.lease > max_record_lease) {
    return broken("lease", "at most " + ms(max_record_lease) + " (24 h)", c.lease);
  }
  if (c.renew_deadline >= c.lease) {
    return broken("renew_deadline", "less than lease (" + ms(c.lease) + ")", c.renew_deadline);
  }
  if (c.renew_deadline <= c.frequent_interval) {
    return broken("renew_deadline",
                  "greater than frequent_interval (" + ms(c.frequent_interval) + ")",
                  c.renew_deadline);
  }
  if (c.frequent_interval <= milliseconds::zero()) {
    return broken("frequent_interval", "greater than 0", c.frequent_interval);
  }
  if (c.infrequent_interval < c.frequent_interval) {
    return broken("infrequent_interval",
                  "at least frequent_interval (" + ms(c.frequent_interval) + ")",
                  c.infrequent_interval);
  }
  if (c.max_clock_skew && *c.max_clock_skew < milliseconds::zero()) {
    return broken("max_clock_skew", "at least 0 (or nullopt to disable rule (c))",
                  *c.max_clock_skew);
  }
  if (c.acquire_grace < milliseconds::zero()) {
    return broken("acquire_grace", "at least 0", c.acquire_grace);
  }
  if (c.acquire_grace > c.lease) {
    return broken("acquire_grace", "at most lease (" + ms(c.lease) + ")", c.acquire_grace);
  }
  return std::nullopt;
}

std::optional<std::string> validate_retry(const elector_config& c) {
  if (c.request_timeout <= milliseconds::zero()) {
    return broken("request_timeout", "greater than 0", c.request_timeout);
  }
  if (auto e = c.retry.validate()) return "retry." + *e;
  const milliseconds budget = c.renew_deadline - c.frequent_interval;
  const milliseconds worst = c.retry.worst_case(c.request_timeout);
  if (worst > budget) {
    return "retry: the worst case of one request (" + ms(worst) + ": " +
           std::to_string(c.retry.delays.size() + 1) + " attempts of request_timeout " +
           ms(c.request_timeout) + " plus the delays) must fit in renew_deadline - " +
           "frequent_interval (" + ms(budget) + ")";
  }
  return std::nullopt;
}

// The follower's TLS settings towards the leader: a client's, with a certificate only together
// with its key.
std::optional<std::string> validate_peer_tls(const tls_config& tls) {
  if (!tls.verify_peer) return "peer.tls.verify_peer: must be on: the leader is always verified";
  if (tls.require_client_cert) {
    return "peer.tls.require_client_cert: must be off: it is a server's setting";
  }
  if (!tls.certificate_file.empty() && !tls.certificate_pem.empty()) {
    return "peer.tls.certificate_file: set either it or peer.tls.certificate_pem, not both";
  }
  if (!tls.private_key_file.empty() && !tls.private_key_pem.empty()) {
    return "peer.tls.private_key_file: set either it or peer.tls.private_key_pem, not both";
  }
  const bool has_cert = !tls.certificate_file.empty() || !tls.certificate_pem.empty();
  const bool has_key = !tls.private_key_file.empty() || !tls.private_key_pem.empty();
  if (has_cert != has_key) {
    return has_cert ? "peer.tls.private_key_file: a client certificate needs its private key"
                    : "peer.tls.certificate_file: a private key needs its client certificate";
  }
  return std::nullopt;
}

std::optional<std::string> validate_peer(const peer_config& peer) {
  if (peer.health_path.empty() || peer.health_path.front() != '/') {
    return "peer.health_path: must start with '/'";
  }
  if (auto e = check_text("peer.health_path", peer.health_path, true)) return e;
  if (peer.timeout <= milliseconds::zero()) {
    return broken("peer.timeout", "greater than 0", peer.timeout);
  }
  const bool pin_shape =
      peer.key_pin.empty() ||
      (peer.key_pin.size() == 71 && peer.key_pin.starts_with("sha256:") &&
       peer.key_pin.find_first_not_of("0123456789abcdef", 7) == std::string::npos);
  if (!pin_shape) return "peer.key_pin: must be empty or 'sha256:' and 64 lowercase hex digits";
  return validate_peer_tls(peer.tls);
}

// Coordinated leadership: bounded priority, a window within the lease, and ranks that delay a
// crash takeover by at most L - D.
std::optional<std::string> validate_coordination(const elector_config& c) {
  const coordination_config& k = c.coordination;
  if (k.priority < -max_record_priority || k.priority > max_record_priority) {
    return "coordination.priority: must be within -1000000 .. 1000000, is " +
           std::to_string(k.priority);
  }
  if (k.handover_window && *k.handover_window <= milliseconds::zero()) {
    return broken("coordination.handover_window", "greater than 0", *k.handover_window);
  }
  if (k.handover_window && *k.handover_window > c.lease) {
    return broken("coordination.handover_window", "at most lease (" + ms(c.lease) + ")",
                  *k.handover_window);
  }
  if (k.settle && (*k.settle < c.frequent_interval || *k.settle > max_record_lease)) {
    return broken("coordination.settle",
                  "within frequent_interval (" + ms(c.frequent_interval) + ") .. 24 h", *k.settle);
  }
  if (k.max_ranks > max_record_candidates) {
    return "coordination.max_ranks: must be at most " + std::to_string(max_record_candidates) +
           ", is " + std::to_string(k.max_ranks);
  }
  if (k.rank_step && *k.rank_step < milliseconds::zero()) {
    return broken("coordination.rank_step", "at least 0", *k.rank_step);
  }
  // Trap: each peer-mode node writes <lock_key>.candidates/<32 hex>, which must fit S3's keys.
  constexpr std::size_t longest_lock_key = 1024 - detail::registration_key_overhead;
  if (c.peer.enabled && c.lock_key.size() > longest_lock_key) {
    return "lock_key: at most " + std::to_string(longest_lock_key) +
           " bytes with peer.enabled (the candidate registration <lock_key>.candidates/<32 hex "
           "digits> must fit in S3's 1024-byte keys), is " +
           std::to_string(c.lock_key.size()) + " bytes";
  }
  const milliseconds longest = c.rank_step() * k.max_ranks;
  if (longest > c.lease - c.renew_deadline) {
    return "coordination.rank_step: max_ranks x rank_step (" + ms(longest) +
           ") must be at most lease - renew_deadline (" + ms(c.lease - c.renew_deadline) + ")";
  }
  return std::nullopt;
}

// The defaults scaled to `lease` (0 < lease <= 24 h): every interval, deadline, timeout and
// retry delay in the default proportions to the lease.
elector_config scaled_to_lease(milliseconds lease) {
  const elector_config defaults;
  elector_config config;
  config.lease = lease;
  // Multiplying first keeps short leases precise; a day times 30 s stays far from overflow.
  const auto scaled = [lease, &defaults](milliseconds at_default) {
    return lease * at_default.count() / defaults.lease.count();
  };
  config.renew_deadline = scaled(defaults.renew_deadline);
  config.frequent_interval = scaled(defaults.frequent_interval);
  config.infrequent_interval = scaled(defaults.infrequent_interval);
  config.request_timeout = scaled(defaults.request_timeout);
  config.retry.delays.clear();
  for (const milliseconds delay : defaults.retry.delays)
    config.retry.delays.push_back(scaled(delay));
  config.peer.timeout = scaled(defaults.peer.timeout);
  return config;
}

}  // namespace

elector_config elector_config::for_lease(milliseconds lease) {
  elector_timing given;
  given.lease = lease;
  elector_config config;
  config.apply_timing(given);
  return config;
}

void elector_config::apply_timing(const elector_timing& given) {
  const elector_config defaults;
  lease = given.lease.value_or(defaults.lease);
  renew_deadline = given.renew_deadline.value_or(defaults.renew_deadline);
  frequent_interval = given.frequent_interval.value_or(defaults.frequent_interval);
  infrequent_interval = given.infrequent_interval.value_or(defaults.infrequent_interval);
  request_timeout = given.request_timeout.value_or(defaults.request_timeout);
  retry.delays = given.retry_delays.value_or(defaults.retry.delays);
  peer.timeout = given.peer_timeout.value_or(defaults.peer.timeout);
  // Out of range: nothing to scale, and validate() names the setting.
  for (const milliseconds value : {lease, renew_deadline, frequent_interval}) {
    if (value <= milliseconds::zero() || value > max_record_lease) return;
  }
  const elector_config scaled = scaled_to_lease(lease);
  const bool deadline_given = given.renew_deadline.has_value();
  const bool frequent_given = given.frequent_interval.has_value();
  if (!deadline_given) renew_deadline = scaled.renew_deadline;
  if (!frequent_given) {
    frequent_interval = deadline_given ? renew_deadline / 2 : scaled.frequent_interval;
  }
  if (!given.infrequent_interval) {
    infrequent_interval =
        deadline_given || frequent_given ? frequent_interval * 6 : scaled.infrequent_interval;
  }
  const milliseconds budget = renew_deadline - frequent_interval;
  const bool budget_given = (deadline_given || frequent_given) && budget > milliseconds::zero();
  if (!given.request_timeout) request_timeout = budget_given ? budget / 5 : scaled.request_timeout;
  if (!given.retry_delays) {
    retry.delays =
        budget_given ? std::vector<milliseconds>{budget / 50, budget / 5} : scaled.retry.delays;
  }
  if (!given.peer_timeout) peer.timeout = scaled.peer.timeout;
}

milliseconds elector_config::handover_window() const {
  if (coordination.handover_window) return *coordination.handover_window;
  return std::clamp(frequent_interval / 5, std::min(milliseconds{100}, lease / 2), lease / 2);
}

milliseconds elector_config::settle_time() const {
  return coordination.settle.value_or(lease);
}

milliseconds elector_config::rank_step() const {
  if (coordination.rank_step) return *coordination.rank_step;
  if (!peer.enabled || !peer.watch || coordination.max_ranks == 0) return milliseconds::zero();
  // Short leases get a shorter step: all ranks together take at most half of L - D.
  const auto ranks = static_cast<milliseconds::rep>(coordination.max_ranks);
  return std::min(milliseconds{250}, (lease - renew_deadline) / (2 * ranks));
}

milliseconds elector_config::stop_grace() const {
  const elector_config defaults;
  constexpr milliseconds grace_at_defaults{std::chrono::seconds{3}};
  return (lease - renew_deadline) * grace_at_defaults.count() /
         (defaults.lease - defaults.renew_deadline).count();
}

void elector_config::match_request_timeout(s3_config& client) const {
  client.request_timeout = request_timeout;
}

std::optional<std::string> elector_config::validate() const {
  if (auto e = check_text("lock_key", lock_key, true)) return e;
  if (auto e = check_text("server_id", server_id, true)) return e;
  // May be empty with peer.enabled: a zero-configuration health_server fills it in when it
  // starts (through elector::health_source()); until then followers find no address and read S3.
  if (auto e = check_text("server_address", server_address, false)) return e;
  if (auto e = validate_timing(*this)) return e;
  if (auto e = validate_retry(*this)) return e;
  if (auto e = validate_peer(peer)) return e;
  return validate_coordination(*this);
}

std::optional<std::string> elector_config::validate(const storage& store) const {
  if (auto e = validate()) return e;
  return validate_store_trust(peer, store.answers_authenticated());
}

std::optional<std::string> validate_store_trust(const peer_config& peer, bool store_authenticated) {
  const bool has_ca = !peer.tls.ca_file.empty() || !peer.tls.ca_pem.empty();
  if (!peer.enabled || store_authenticated || peer.trust_unauthenticated_store || has_ca) {
    return std::nullopt;
  }
  // Without CAs the follower trusts the leader by the pin in the record it read, or by the
  // system's CAs, which vouch for any host of leaderAddr an attacker could name.
  return "peer.enabled: the store's answers are not authenticated (plain HTTP over a network): "
         "anyone on the path can answer with a forged lock record whose leaderAddr and "
         "peerKeyPin pin followers to an impostor that keeps them off the store and the lock, "
         "and the session token travels in clear; reach the store over HTTPS, give peer.tls CAs "
         "(CA mode), or set peer.trust_unauthenticated_store if the path is trusted";
}

std::optional<std::string> validate_update(const elector_config& current,
                                           const elector_config& next) {
  if (auto e = next.validate()) return e;
  if (next.lock_key != current.lock_key) return "lock_key: cannot change while running";
  if (next.server_id != current.server_id) return "server_id: cannot change while running";
  return std::nullopt;
}

}  // namespace s3lect::inline v1
