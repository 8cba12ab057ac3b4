// Who may hold a connection to an http_server: a total cap on connections that are not holding
// a watch, a cap per source address, and the watches counted apart. Sans-I/O: the server's
// accept loop asks, the connections report their moves, nothing here touches a socket.
//
// Why watches are counted apart (docs/peer-mode.md#a-hostile-client): a follower's watch is
// held for up to a minute, a probe for milliseconds, and a silent attacker's connection until
// the first-request deadline. If all three shared one pool, a few dozen watchers would leave
// no room for probes, and a burst of silent connections would leave no room for a follower to
// start its watch. So a connection enters the general pool (max_connections) when accepted,
// and leaves it while it holds a watch: the responder's own watch cap (health_handler_config::
// max_watchers) bounds those. Watches cannot starve probes, and probes cannot take the slot of
// a watch already held. A new watcher still passes through the general pool for the handshake
// and its request, which the first-request deadline and the per-source cap keep turning over.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace s3lect::inline v1::detail {

/// Why a connection was closed at once.
enum class refusal_reason { max_connections, per_source, file_descriptors };

/// The address a connection counts against: an IPv4 address, or the /64 prefix of an IPv6
/// address (one host usually owns a whole /64). An IPv4-mapped IPv6 address counts as IPv4.
struct source_key {
  std::array<unsigned char, 16> bytes{};
  bool operator==(const source_key&) const = default;
};

source_key source_of(const boost::asio::ip::address& address);
/// The text of source_of(address): "192.0.2.7", or an IPv6 client's "2001:db8:1:2::/64".
std::string source_name(const boost::asio::ip::address& address);

struct source_key_hash {
  std::size_t operator()(const source_key& key) const noexcept;
};

class connection_admission {
 public:
  connection_admission(std::size_t max_connections, std::size_t max_per_source)
      : max_connections_(max_connections), max_per_source_(max_per_source) {}

  /// Counts a new connection from `source` in the general pool, or says why it is refused.
  std::optional<refusal_reason> admit(const source_key& source);
  /// A connection admitted from `source` ended; `watching`: it held a watch at the end.
  void release(const source_key& source, bool watching);
  /// A connection moves out of the general pool while it holds a watch.
  void begin_watch();
  /// Its watch answered, the connection is back in the general pool; false when the pool is
  /// over its cap meanwhile, so that the connection should close after this answer.
  bool end_watch();

  std::size_t general_connections() const noexcept { return general_; }
  std::size_t watches() const noexcept { return watches_; }

 private:
  const std::size_t max_connections_;
  const std::size_t max_per_source_;
  std::size_t general_ = 0;
  std::size_t watches_ = 0;
  /// Connections per source, watches included: one address holds at most max_per_source of
  /// anything, so that it cannot take the watch slots either.
  std::unordered_map<source_key, std::size_t, source_key_hash> per_source_;
};

}  // namespace s3lect::inline v1::detail
