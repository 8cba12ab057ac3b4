#include "connection_admission.hpp"

#include <cstring>
#include <functional>
#include <string_view>

namespace s3lect::inline v1::detail {

source_key source_of(const boost::asio::ip::address& address) {
  source_key key;
  if (address.is_v6() && !address.to_v6().is_v4_mapped()) {
    const auto bytes = address.to_v6().to_bytes();
    std::memcpy(key.bytes.data(), bytes.data(), 8);  // the /64 prefix
    key.bytes[15] = 6;                               // apart from every IPv4 key
    return key;
  }
  const auto v4 = address.is_v4() ? address.to_v4()
                                  : boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped,
                                                                     address.to_v6());
  const auto bytes = v4.to_bytes();
  std::memcpy(key.bytes.data(), bytes.data(), bytes.size());
  return key;
}

std::string source_name(const boost::asio::ip::address& address) {
  if (address.is_v6() && !address.to_v6().is_v4_mapped()) {
    boost::asio::ip::address_v6::bytes_type prefix{};
    std::memcpy(prefix.data(), address.to_v6().to_bytes().data(), 8);
    return boost::asio::ip::address_v6(prefix).to_string() + "/64";
  }
  if (address.is_v6()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6())
        .to_string();
  }
  return address.to_string();
}

std::size_t source_key_hash::operator()(const source_key& key) const noexcept {
  const std::string_view text(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size());
  return std::hash<std::string_view>{}(text);
}

std::optional<refusal_reason> connection_admission::admit(const source_key& source) {
  if (general_ >= max_connections_) return refusal_reason::max_connections;
  std::size_t& from_source = per_source_[source];
  if (from_source >= max_per_source_) return refusal_reason::per_source;
  ++from_source;
  ++general_;
  return std::nullopt;
}

void connection_admission::release(const source_key& source, bool watching) {
  if (watching) {
    --watches_;
  } else {
    --general_;
  }
  const auto entry = per_source_.find(source);
  if (entry != per_source_.end() && --entry->second == 0) per_source_.erase(entry);
}

void connection_admission::begin_watch() {
  --general_;
  ++watches_;
}

bool connection_admission::end_watch() {
  --watches_;
  ++general_;
  return general_ <= max_connections_;
}

}  // namespace s3lect::inline v1::detail
