// Where followers reach a health server, when nobody said (docs/peer-mode.md#running-it).
#include <s3lect/health.hpp>

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <memory>
#include <optional>

namespace s3lect::inline v1 {
namespace {

namespace ip = boost::asio::ip;

struct ifaddrs_free {
  void operator()(ifaddrs* list) const { freeifaddrs(list); }
};

/// A usable address of `entry`: up, not loopback, and for IPv6 not link-local (which needs a
/// scope that a leaderAddr cannot carry).
std::optional<ip::address> usable(const ifaddrs& entry, bool v6) {
  if (entry.ifa_addr == nullptr || (entry.ifa_flags & IFF_UP) == 0 ||
      (entry.ifa_flags & IFF_LOOPBACK) != 0) {
    return std::nullopt;
  }
  if (!v6 && entry.ifa_addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(entry.ifa_addr);
    return ip::make_address_v4(ntohl(in->sin_addr.s_addr));
  }
  if (v6 && entry.ifa_addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(entry.ifa_addr);
    ip::address_v6::bytes_type bytes;
    std::copy(std::begin(in6->sin6_addr.s6_addr), std::end(in6->sin6_addr.s6_addr), bytes.begin());
    const ip::address_v6 address(bytes);
    if (address.is_link_local()) return std::nullopt;
    return address;
  }
  return std::nullopt;
}

/// The first usable interface address of the family, in the kernel's order.
std::optional<ip::address> first_interface_address(bool v6) {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return std::nullopt;
  const std::unique_ptr<ifaddrs, ifaddrs_free> list(raw);
  for (const ifaddrs* entry = raw; entry != nullptr; entry = entry->ifa_next) {
    if (auto address = usable(*entry, v6)) return address;
  }
  return std::nullopt;
}

}  // namespace

std::string reachable_address(const ip::tcp::endpoint& bound) {
  ip::address address = bound.address();
  if (address.is_unspecified()) {
    // [::] usually accepts IPv4 too: an IPv4 address is what most followers can reach.
    std::optional<ip::address> found = first_interface_address(false);
    if (!found && address.is_v6()) found = first_interface_address(true);
    // Nothing but loopback: only nodes on this machine can follow, and they can at 127.0.0.1.
    address = found.value_or(ip::address(ip::address_v4::loopback()));
  }
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(bound.port());
}

}  // namespace s3lect::inline v1
