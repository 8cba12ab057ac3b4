#include "cli/serve_options.hpp"

#include <s3lect/metrics_server.hpp>

#include <boost/asio/ip/address.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace s3lect::cli {
namespace {

/// HOST and PORT of HOST:PORT or [IPv6]:PORT, the brackets removed; nullopt when malformed.
struct host_port {
  std::string host;
  std::string port;
};

std::optional<host_port> split_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return std::nullopt;
  }
  return host_port{host, text.substr(colon + 1)};
}

/// The IP address `host` names, if it is an IP literal.
std::optional<boost::asio::ip::address> ip_literal(const std::string& host) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  return address;
}

bool readable(const std::string& option, const std::string& path, std::string& error) {
  if (::access(path.c_str(), R_OK) == 0) return true;
  error = "--" + option + ": cannot read '" + path + "': " + std::strerror(errno);
  return false;
}

const std::vector<std::string>& peer_only_options() {
  static const std::vector<std::string> names{"peer-listen", "peer-cert",        "peer-key",
                                              "peer-ca",     "peer-client-cert", "peer-client-key",
                                              "peer-watch",  "peer-timeout"};
  return names;
}

std::optional<std::string> check_metrics_listen(const std::string& address) {
  metrics_server_config probe;
  probe.bind_address = address;
  probe.render = [] { return std::string(); };
  if (auto problem = probe.validate()) {
    return "--metrics-listen: expected IP:PORT with an IP address (port 0 picks a free one), "
           "got '" +
           address + "'";
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& serve_flag_names() {
  static const std::vector<std::string> names{"peer", "peer-watch"};
  return names;
}

const std::vector<std::string>& serve_valued_names() {
  static const std::vector<std::string> names{"peer-listen",  "peer-cert",        "peer-key",
                                              "peer-ca",      "peer-client-cert", "peer-client-key",
                                              "peer-timeout", "metrics-listen"};
  return names;
}

const char* serve_options_help() {
  return "  --peer                   peer mode: every node serves an HTTPS health endpoint\n"
         "                           (/health/leadership), and settled followers ask the\n"
         "                           leader there instead of reading S3 (default: off)\n"
         "  --peer-listen IP:PORT    where the health endpoint listens (default: all\n"
         "                           interfaces, 0.0.0.0 or [::], on the port of --addr).\n"
         "                           Without --addr, it is also the leaderAddr followers use,\n"
         "                           so it must then be a specific IP. Port 0 is refused.\n"
         "  --peer-cert PATH         PEM certificate chain of the health endpoint; it must name\n"
         "                           the host or IP of --addr (required with --peer)\n"
         "  --peer-key PATH          its unencrypted PEM private key (required with --peer)\n"
         "  --peer-ca PATH           PEM CAs that the leader's certificate, and with mutual TLS\n"
         "                           the followers' client certificates, must chain to\n"
         "                           (default: the system's CAs; required with\n"
         "                           --peer-client-cert)\n"
         "  --peer-client-cert PATH  mutual TLS: the certificate this node presents to the\n"
         "                           leader. A node that presents one also requires one, signed\n"
         "                           by --peer-ca, from every follower that asks it: give all\n"
         "                           nodes the same peer options (default: no mutual TLS)\n"
         "  --peer-client-key PATH   the client certificate's unencrypted PEM private key\n"
         "                           (required with --peer-client-cert)\n"
         "  --peer-watch             followers keep a watch open on the leader's endpoint, so a\n"
         "                           release or a crash is noticed at once (default: off; a\n"
         "                           check every --infrequent)\n"
         "  --peer-timeout DUR       bound on one attempt to ask the leader; each check runs\n"
         "                           under the --retry-delays schedule (default 3s)\n"
         "  --metrics-listen IP:PORT serve Prometheus metrics at http://IP:PORT/metrics, plain\n"
         "                           HTTP; port 0 picks a free port, logged as \"metrics server\n"
         "                           listening\" (default: off; with --peer the health\n"
         "                           endpoint serves https://.../metrics as well)\n";
}

std::string option_for_server_field(std::string_view field) {
  static const std::pair<std::string_view, std::string_view> options[] = {
      {"bind_address", "--peer-listen"},
      {"certificate_file", "--peer-cert"},
      {"private_key_file", "--peer-key"},
      {"private_key", "--peer-key"},
      {"client_ca_file", "--peer-ca"},
      {"require_client_cert", "--peer-client-cert"},
      {"peer_ca_file", "--peer-ca"},
      {"peer_client_cert_file", "--peer-client-cert"},
      {"peer_client_key_file", "--peer-client-key"},
  };
  for (const auto& [name, option] : options) {
    if (name == field) return std::string(option);
  }
  return {};
}

std::optional<serve_settings> make_serve_settings(const parsed_args& args, elector_config& config,
                                                  std::string& error) {
  serve_settings settings;
  if (auto metrics = args.get("metrics-listen")) {
    if (auto problem = check_metrics_listen(*metrics)) {
      error = *problem;
      return std::nullopt;
    }
    settings.metrics_listen = *metrics;
  }

  if (!args.has("peer")) {
    for (const auto& option : peer_only_options()) {
      if (args.has(option)) {
        error = "--" + option + ": needs --peer";
        return std::nullopt;
      }
    }
    return settings;
  }

  const auto cert = args.get("peer-cert");
  const auto key = args.get("peer-key");
  if (!cert || !key) {
    error = std::string("--peer: needs ") + (cert ? "--peer-key" : "--peer-cert") +
            " (any node may lead, so every node serves the health endpoint over HTTPS)";
    return std::nullopt;
  }
  const auto ca = args.get("peer-ca");
  const auto client_cert = args.get("peer-client-cert");
  const auto client_key = args.get("peer-client-key");
  if (client_cert.has_value() != client_key.has_value()) {
    error = client_cert ? "--peer-client-cert: needs --peer-client-key"
                        : "--peer-client-key: needs --peer-client-cert";
    return std::nullopt;
  }
  if (client_cert && !ca) {
    error =
        "--peer-client-cert: mutual TLS needs --peer-ca, the CA that the nodes' client "
        "certificates must chain to";
    return std::nullopt;
  }

  health_server_config server;
  const std::string& addr = config.server_address;
  std::optional<host_port> advertised;
  if (!addr.empty()) {
    advertised = split_host_port(addr);  // --addr was checked to be HOST:PORT
    const auto ip = advertised ? ip_literal(advertised->host) : std::nullopt;
    if (ip && ip->is_unspecified()) {
      error = "--addr: " + addr +
              " is not an address followers can reach: give this node's IP or host name";
      return std::nullopt;
    }
  }
  if (auto listen = args.get("peer-listen")) {
    const auto parts = split_host_port(*listen);
    const auto ip = parts ? ip_literal(parts->host) : std::nullopt;
    if (!parts || !ip) {
      error =
          "--peer-listen: expected IP:PORT with an IP address, such as 10.0.0.5:8443 or "
          "0.0.0.0:8443, got '" +
          *listen + "'";
      return std::nullopt;
    }
    if (parts->port == "0") {
      error = "--peer-listen: port 0 is not allowed: followers must know the port";
      return std::nullopt;
    }
    if (addr.empty()) {
      if (ip->is_unspecified()) {
        error = "--addr: needed with --peer-listen " + *listen +
                ": followers reach the leader at --addr, and " + parts->host +
                " is not an address they can reach";
        return std::nullopt;
      }
      config.server_address = *listen;
    }
    server.bind_address = *listen;
  } else if (advertised) {
    const auto ip = ip_literal(advertised->host);
    server.bind_address = (ip && ip->is_v6() ? "[::]:" : "0.0.0.0:") + advertised->port;
  } else {
    error =
        "--peer: needs --addr HOST:PORT (where followers reach this node) or --peer-listen "
        "IP:PORT";
    return std::nullopt;
  }

  if (!readable("peer-cert", *cert, error) || !readable("peer-key", *key, error) ||
      (ca && !readable("peer-ca", *ca, error)) ||
      (client_cert && !readable("peer-client-cert", *client_cert, error)) ||
      (client_key && !readable("peer-client-key", *client_key, error))) {
    return std::nullopt;
  }
  server.certificate_file = *cert;
  server.private_key_file = *key;
  if (client_cert) {
    server.client_ca_file = *ca;
    server.require_client_cert = true;
    config.peer.tls.certificate_file = *client_cert;
    config.peer.tls.private_key_file = *client_key;
  }
  if (ca) config.peer.tls.ca_file = *ca;
  if (auto timeout = args.get("peer-timeout")) {
    const auto parsed = parse_duration(*timeout);
    if (!parsed || *parsed <= std::chrono::milliseconds::zero()) {
      error = "--peer-timeout: expected a duration greater than 0 such as 500ms or 3s, got '" +
              *timeout + "'";
      return std::nullopt;
    }
    config.peer.timeout = *parsed;
  }
  config.peer.enabled = true;
  config.peer.watch = args.has("peer-watch");
  server.handler.path = config.peer.health_path;

  if (auto problem = server.validate()) {
    std::string_view field = *problem;
    field = field.substr(0, field.find_first_of(":."));
    const std::string option = option_for_server_field(field);
    error = option.empty() ? "invalid peer configuration: " + *problem : option + ": " + *problem;
    return std::nullopt;
  }
  settings.peer_server = std::move(server);
  return settings;
}

}  // namespace s3lect::cli
