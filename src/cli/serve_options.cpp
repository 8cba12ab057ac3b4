#include "cli/serve_options.hpp"

#include <s3lect/metrics_server.hpp>
#include <s3lect/tls.hpp>

#include <boost/asio/ip/address.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

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
  static const std::vector<std::string> names{
      "peer-listen",  "peer-advertise",        "peer-cert",       "peer-key",
      "peer-ca",      "peer-client-cert",      "peer-client-key", "peer-watch",
      "peer-timeout", "trust-plain-http-store"};
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
  static const std::vector<std::string> names{"peer", "peer-watch", "trust-plain-http-store"};
  return names;
}

const std::vector<std::string>& serve_valued_names() {
  static const std::vector<std::string> names{
      "peer-listen",      "peer-advertise",  "peer-cert",    "peer-key",       "peer-ca",
      "peer-client-cert", "peer-client-key", "peer-timeout", "metrics-listen", "liveness-stall"};
  return names;
}

const char* serve_options_help() {
  return "  --peer                   peer mode: every node serves an HTTPS health endpoint\n"
         "                           (/health/leadership), and settled followers ask the\n"
         "                           leader there instead of reading S3, and at least\n"
         "                           every 10 --infrequent (default: off). Followers trust\n"
         "                           the leader by the key pin in the lock record only when\n"
         "                           the store is reached over https:// or a loopback IP;\n"
         "                           over plain HTTP they need --peer-ca (or\n"
         "                           --trust-plain-http-store)\n"
         "  --peer-listen IP:PORT    where the health endpoint listens; port 0 picks a free\n"
         "                           one (default: all interfaces, 0.0.0.0 or [::], on the\n"
         "                           port of --addr or --peer-advertise, else on a free port)\n"
         "  --peer-advertise HOST:PORT  where followers reach this node, written as the\n"
         "                           record's leaderAddr; for NAT and containers (default:\n"
         "                           the listening IP and port, or for 0.0.0.0 and [::] the\n"
         "                           first non-loopback interface address; same as --addr)\n"
         "  --peer-cert PATH         PEM certificate chain of the health endpoint; it must name\n"
         "                           the host or IP of --addr (default: zero-configuration\n"
         "                           TLS: a fresh in-memory key and self-signed certificate,\n"
         "                           whose key pin the lock record carries to the followers)\n"
         "  --peer-key PATH          its unencrypted PEM private key (required with\n"
         "                           --peer-cert)\n"
         "  --peer-ca PATH           PEM CAs that the leader's certificate, and with mutual TLS\n"
         "                           the followers' client certificates, must chain to\n"
         "                           (default: the system's CAs; required with\n"
         "                           --peer-client-cert). A record with a key pin, read over\n"
         "                           https:// or a loopback IP, is trusted by its pin instead\n"
         "  --peer-client-cert PATH  mutual TLS: the certificate this node presents to the\n"
         "                           leader. A node that presents one also requires one, signed\n"
         "                           by --peer-ca, from every follower that asks it: give all\n"
         "                           nodes the same peer options (default: no mutual TLS)\n"
         "  --peer-client-key PATH   the client certificate's unencrypted PEM private key\n"
         "                           (required with --peer-client-cert)\n"
         "  --peer-watch             followers keep a watch open on the leader's endpoint, so a\n"
         "                           release or a crash is noticed at once (default: off; a\n"
         "                           check every --infrequent)\n"
         "  --trust-plain-http-store  with --peer over an http:// --endpoint that is not a\n"
         "                           loopback address: trust the leader's address and key pin\n"
         "                           in the records read anyway. Anyone on the network path\n"
         "                           can then forge a record that pins the followers to an\n"
         "                           impostor, keeping them off the store and the lock, and\n"
         "                           the session token travels in clear. Without it, --peer\n"
         "                           over such a store needs --peer-ca (default: refused,\n"
         "                           exit 2)\n"
         "  --peer-timeout DUR       bound on one attempt to ask the leader; each check runs\n"
         "                           under the --retry-delays schedule (default 3s)\n"
         "  --metrics-listen IP:PORT serve Prometheus metrics at http://IP:PORT/metrics, plain\n"
         "                           HTTP; port 0 picks a free port, logged as \"metrics server\n"
         "                           listening\" (default: off; with --peer the health\n"
         "                           endpoint serves https://.../metrics as well). It also\n"
         "                           serves /healthz (503 when the elector is stuck: a leader\n"
         "                           past its renew deadline, or a loop that stopped running)\n"
         "                           and /readyz (200 for a leader, or a follower whose last\n"
         "                           read succeeded), for Kubernetes probes\n"
         "  --liveness-stall DUR     /healthz fails once the elector's loop has not run for DUR\n"
         "                           (default: twice --infrequent plus the worst case of one\n"
         "                           request with its retries; needs --metrics-listen)\n";
}

std::string option_for_server_field(std::string_view field) {
  // health_server_config names its TLS fields "tls.*".
  if (field.substr(0, 4) == "tls.") field.remove_prefix(4);
  static const std::pair<std::string_view, std::string_view> options[] = {
      {"bind_address", "--peer-listen"},  {"certificate_file", "--peer-cert"},
      {"private_key_file", "--peer-key"}, {"private_key", "--peer-key"},
      {"ca_file", "--peer-ca"},           {"require_client_cert", "--peer-client-cert"},
  };
  for (const auto& [name, option] : options) {
    if (name == field) return std::string(option);
  }
  return {};
}

namespace {

/// The files the peer options name.
struct peer_files {
  std::string cert;  ///< Empty, like `key`: zero-configuration TLS.
  std::string key;
  std::optional<std::string> ca;
  std::optional<std::string> client_cert;
  std::optional<std::string> client_key;
};

/// --metrics-listen, checked; false with `error` set when it is malformed.
bool apply_metrics_listen(const parsed_args& args, serve_settings& settings, std::string& error) {
  if (auto metrics = args.get("metrics-listen")) {
    if (auto problem = check_metrics_listen(*metrics)) {
      error = *problem;
      return false;
    }
    settings.metrics_listen = *metrics;
  }
  if (auto stall = args.get("liveness-stall")) {
    const auto parsed = parse_duration(*stall);
    if (!parsed || *parsed <= std::chrono::milliseconds::zero()) {
      error = "--liveness-stall: expected a duration greater than 0 such as 90s or 2m, got '" +
              *stall + "'";
      return false;
    }
    if (!settings.metrics_listen) {
      error = "--liveness-stall: needs --metrics-listen, which serves /healthz";
      return false;
    }
    settings.liveness_stall = *parsed;
  }
  return true;
}

/// Without --peer: refuses every other peer option.
bool no_peer_options(const parsed_args& args, std::string& error) {
  for (const auto& option : peer_only_options()) {
    if (args.has(option)) {
      error = "--" + option + ": needs --peer";
      return false;
    }
  }
  return true;
}

/// The certificate, key and CA options, in the combinations that make sense.
std::optional<peer_files> peer_file_options(const parsed_args& args, std::string& error) {
  const auto cert = args.get("peer-cert");
  const auto key = args.get("peer-key");
  if (cert.has_value() != key.has_value()) {
    error = cert ? "--peer-cert: needs --peer-key" : "--peer-key: needs --peer-cert";
    return std::nullopt;
  }
  peer_files files{cert.value_or(""), key.value_or(""), args.get("peer-ca"),
                   args.get("peer-client-cert"), args.get("peer-client-key")};
  if (files.client_cert.has_value() != files.client_key.has_value()) {
    error = files.client_cert ? "--peer-client-cert: needs --peer-client-key"
                              : "--peer-client-key: needs --peer-client-cert";
    return std::nullopt;
  }
  if (files.client_cert && !files.ca) {
    error =
        "--peer-client-cert: mutual TLS needs --peer-ca, the CA that the nodes' client "
        "certificates must chain to";
    return std::nullopt;
  }
  return files;
}

/// True when every file named is readable; else false with `error` naming the option.
bool peer_files_readable(const peer_files& files, std::string& error) {
  const bool zero_config = files.cert.empty();
  return (zero_config ||
          (readable("peer-cert", files.cert, error) && readable("peer-key", files.key, error))) &&
         (!files.ca || readable("peer-ca", *files.ca, error)) &&
         (!files.client_cert || readable("peer-client-cert", *files.client_cert, error)) &&
         (!files.client_key || readable("peer-client-key", *files.client_key, error));
}

/// --peer-advertise into config.server_address: HOST:PORT that followers can reach. The same
/// field as --addr, so at most one of the two.
bool apply_peer_advertise(const parsed_args& args, elector_config& config, std::string& error) {
  const auto advertise = args.get("peer-advertise");
  if (!advertise) return true;
  const auto parts = split_host_port(*advertise);
  const bool port_ok = parts && parts->port.size() <= 5 &&
                       parts->port.find_first_not_of("0123456789") == std::string::npos &&
                       std::stoul(parts->port) >= 1 && std::stoul(parts->port) <= 65535;
  if (!port_ok) {
    error = "--peer-advertise: expected HOST:PORT with a port of 1-65535, got '" + *advertise + "'";
    return false;
  }
  if (!config.server_address.empty()) {
    error = "--peer-advertise: give it or --addr, not both (both set the leaderAddr)";
    return false;
  }
  config.server_address = *advertise;
  return true;
}

/// --peer-listen as the bind address (port 0: a free one). Without --addr or --peer-advertise,
/// leaderAddr is where the server ends up listening (health_server_config::publish_endpoint).
std::optional<std::string> bind_to_peer_listen(const std::string& listen, std::string& error) {
  const auto parts = split_host_port(listen);
  const auto ip = parts ? ip_literal(parts->host) : std::nullopt;
  if (!parts || !ip) {
    error =
        "--peer-listen: expected IP:PORT with an IP address, such as 10.0.0.5:8443 or "
        "0.0.0.0:8443, got '" +
        listen + "'";
    return std::nullopt;
  }
  return listen;
}

/// Where the health server listens: --peer-listen; else every interface, on the port of --addr
/// or --peer-advertise, or on a free port when neither is given.
std::optional<std::string> peer_bind_address(const parsed_args& args, elector_config& config,
                                             std::string& error) {
  std::optional<host_port> advertised;
  if (const std::string& addr = config.server_address; !addr.empty()) {
    advertised = split_host_port(addr);  // --addr and --peer-advertise were checked
    const auto ip = advertised ? ip_literal(advertised->host) : std::nullopt;
    if (ip && ip->is_unspecified()) {
      error = (args.has("peer-advertise") ? "--peer-advertise: " : "--addr: ") + addr +
              " is not an address followers can reach: give this node's IP or host name";
      return std::nullopt;
    }
  }
  if (auto listen = args.get("peer-listen")) return bind_to_peer_listen(*listen, error);
  if (advertised) {
    const auto ip = ip_literal(advertised->host);
    return (ip && ip->is_v6() ? "[::]:" : "0.0.0.0:") + advertised->port;
  }
  return std::string("0.0.0.0:0");
}

/// The server's identity: the files, or without them the library's zero-configuration TLS
/// (adopt_self_signed_identity), whose pin the elector writes into its records. False with
/// `error` when OpenSSL cannot make one.
bool apply_server_identity(const peer_files& files, health_server_config& server,
                           elector_config& config, std::string& error) {
  server.tls.certificate_file = files.cert;
  server.tls.private_key_file = files.key;
  try {
    config.peer.key_pin = adopt_self_signed_identity(server.tls);
    return true;
  } catch (const std::exception& e) {
    error = std::string("--peer: ") + e.what();
    return false;
  }
}

/// The TLS files into the server's settings and the elector's peer client settings. A node
/// that presents a client certificate also requires one: mutual TLS for the whole group.
void apply_peer_files(const peer_files& files, health_server_config& server,
                      elector_config& config) {
  if (files.client_cert) {
    server.tls.ca_file = *files.ca;
    server.tls.require_client_cert = true;
    config.peer.tls.certificate_file = *files.client_cert;
    config.peer.tls.private_key_file = *files.client_key;
  }
  if (files.ca) config.peer.tls.ca_file = *files.ca;
}

/// --peer-timeout, --peer-watch and peer mode itself into `config`.
bool apply_peer_behaviour(const parsed_args& args, elector_config& config, std::string& error) {
  if (auto timeout = args.get("peer-timeout")) {
    const auto parsed = parse_duration(*timeout);
    if (!parsed || *parsed <= std::chrono::milliseconds::zero()) {
      error = "--peer-timeout: expected a duration greater than 0 such as 500ms or 3s, got '" +
              *timeout + "'";
      return false;
    }
    config.peer.timeout = *parsed;
  }
  config.peer.enabled = true;
  config.peer.watch = args.has("peer-watch");
  config.peer.trust_unauthenticated_store = args.has("trust-plain-http-store");
  return true;
}

/// The library's own check of the server's settings, blamed on the option that set the field.
bool server_settings_valid(const health_server_config& server, std::string& error) {
  const auto problem = server.validate();
  if (!problem) return true;
  std::string_view field = *problem;
  field = field.substr(0, field.find(':'));
  // "handler.path" and the like: blame the top-level field.
  if (field.substr(0, 4) != "tls.") field = field.substr(0, field.find('.'));
  const std::string option = option_for_server_field(field);
  error = option.empty() ? "invalid peer configuration: " + *problem : option + ": " + *problem;
  return false;
}

}  // namespace

std::optional<serve_settings> make_serve_settings(const parsed_args& args, elector_config& config,
                                                  std::string& error) {
  serve_settings settings;
  if (!apply_metrics_listen(args, settings, error)) return std::nullopt;
  if (!args.has("peer")) {
    if (!no_peer_options(args, error)) return std::nullopt;
    return settings;
  }
  const std::optional<peer_files> files = peer_file_options(args, error);
  if (!files || !apply_peer_advertise(args, config, error)) return std::nullopt;
  health_server_config server;
  std::optional<std::string> bind_address = peer_bind_address(args, config, error);
  if (!bind_address || !peer_files_readable(*files, error)) return std::nullopt;
  server.bind_address = std::move(*bind_address);
  if (config.server_address.empty()) {
    const auto parts = split_host_port(server.bind_address);
    const auto ip = parts ? ip_literal(parts->host) : std::nullopt;
    // A wildcard address or a free port is known only once the server listens: the server
    // then publishes it to the elector (health_server_config::publish_endpoint).
    server.publish_endpoint = !ip || ip->is_unspecified() || parts->port == "0";
    if (!server.publish_endpoint) config.server_address = server.bind_address;
  }
  if (!apply_server_identity(*files, server, config, error)) return std::nullopt;
  apply_peer_files(*files, server, config);
  if (!apply_peer_behaviour(args, config, error)) return std::nullopt;
  server.handler.path = config.peer.health_path;
  if (!server_settings_valid(server, error)) return std::nullopt;
  settings.peer_server = std::move(server);
  return settings;
}

}  // namespace s3lect::cli
