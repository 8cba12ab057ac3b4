#include "connection_string.hpp"

#include <algorithm>

namespace s3lect::inline v1::detail {
namespace {

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The segments `key=value`, keys lower-cased.
std::optional<std::map<std::string, std::string>> segments(std::string_view text,
                                                           std::string& problem) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find(';'), text.size());
    const std::string_view segment = trimmed(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
    if (segment.empty()) continue;
    const std::size_t equals = segment.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      problem = "a segment is not Key=Value";
      return std::nullopt;
    }
    const std::string key = lowered(trimmed(segment.substr(0, equals)));
    if (!out.emplace(key, std::string(trimmed(segment.substr(equals + 1)))).second) {
      problem = key + " is given twice";
      return std::nullopt;
    }
  }
  return out;
}

std::string value_of(const std::map<std::string, std::string>& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? std::string() : it->second;
}

}  // namespace

std::optional<connection_settings> parse_connection_string(std::string_view text,
                                                           std::string& problem) {
  const auto map = segments(text, problem);
  if (!map) return std::nullopt;
  connection_settings out;
  if (lowered(value_of(*map, "usedevelopmentstorage")) == "true") {
    if (map->count("accountname") || map->count("accountkey")) {
      problem = "UseDevelopmentStorage=true takes no account settings";
      return std::nullopt;
    }
    out.account = development_account;
    out.account_key = development_key;
    const std::string proxy = value_of(*map, "developmentstorageproxyuri");
    out.blob_endpoint = (proxy.empty() ? std::string("http://127.0.0.1:10000") : proxy) + "/" +
                        std::string(development_account);
    return out;
  }
  out.account = value_of(*map, "accountname");
  out.account_key = value_of(*map, "accountkey");
  out.sas_token = value_of(*map, "sharedaccesssignature");
  out.blob_endpoint = value_of(*map, "blobendpoint");
  if (out.blob_endpoint.empty() && !out.account.empty()) {
    std::string protocol = value_of(*map, "defaultendpointsprotocol");
    if (protocol.empty()) protocol = "https";
    std::string suffix = value_of(*map, "endpointsuffix");
    if (suffix.empty()) suffix = "core.windows.net";
    out.blob_endpoint = protocol + "://" + out.account + ".blob." + suffix;
  }
  return out;
}

}  // namespace s3lect::inline v1::detail
