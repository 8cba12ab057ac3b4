// What `s3lect run` serves besides campaigning: in peer mode (--peer, --peer-listen,
// --peer-cert, --peer-key, --peer-ca, --peer-client-cert, --peer-client-key, --peer-watch) the
// HTTPS health endpoint followers check (and /metrics beside it), and with --metrics-listen a
// plain-HTTP /metrics endpoint.
#pragma once

#include "cli/options.hpp"

#include <s3lect/config.hpp>
#include <s3lect/health.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// The servers `s3lect run` starts. Without logger and metrics: run fills those in.
struct serve_settings {
  /// Peer mode: the health server every node runs (a follower answers "not leader"). With
  /// neither --addr nor --peer-advertise and a wildcard or free port to listen on, its
  /// publish_endpoint is set: leaderAddr is reachable_address() of where it ends up listening,
  /// published to the elector once it listens and before campaigning.
  std::optional<health_server_config> peer_server;
  /// --metrics-listen: where the plain-HTTP /metrics endpoint listens.
  std::optional<std::string> metrics_listen;
  /// --liveness-stall: the metrics endpoint's /healthz fails once the elector's loop has not
  /// run this long; zero: the library's default (liveness_limits::max_loop_stall).
  std::chrono::milliseconds liveness_stall{0};
};

/// Flag names of the peer options (no value).
const std::vector<std::string>& serve_flag_names();
/// Valued option names of the peer options and --metrics-listen.
const std::vector<std::string>& serve_valued_names();
/// Help text of the peer options and --metrics-listen.
const char* serve_options_help();

/// Applies the peer options to `config` (peer.enabled, server_address, peer.watch, the CA and
/// the client certificate) and builds the servers' settings. Needs config.server_address set
/// from --addr already. Returns nullopt and sets `error` to one line naming the option at fault.
/// The rules:
/// - every --peer-* option needs --peer; --peer-cert and --peer-key go together; without them
///   the node makes an in-memory key and self-signed certificate and config.peer.key_pin is
///   its pin (zero-configuration TLS, adopt_self_signed_identity);
/// - --peer-listen is IP:PORT with an IP literal (port 0: a free one); without it the server
///   listens on all interfaces (0.0.0.0, or [::] for an IPv6 --addr) on the port of --addr or
///   --peer-advertise, else on a free port;
/// - --peer-advertise is --addr under its peer-mode name: at most one of them, neither a
///   wildcard address; without both, leaderAddr is reachable_address() of the bound endpoint
///   (health_server_config::publish_endpoint);
/// - --peer-client-cert and --peer-client-key go together and need --peer-ca. A node that
///   presents a client certificate also requires one from its followers, verified against
///   --peer-ca: mutual TLS is on for the whole group or off;
/// - --peer-ca alone: followers verify the leader against it (default: the system's CAs).
/// - certificate, key and CA files must be readable.
std::optional<serve_settings> make_serve_settings(const parsed_args& args, elector_config& config,
                                                  std::string& error);

/// The option that sets health_server_config field `field` ("tls.certificate_file" →
/// "--peer-cert"); empty when none does.
std::string option_for_server_field(std::string_view field);

}  // namespace s3lect::cli
