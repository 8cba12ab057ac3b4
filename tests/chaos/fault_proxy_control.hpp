// The fault proxy's control logic without I/O: the fault state of each listener, the control
// protocol's parser, and the rule that decides when a chunk of data may be forwarded. The proxy
// (fault_proxy_server) only performs what these functions decide.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace s3lect::chaos {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// up: client to server (requests); down: server to client (responses).
enum class direction { up, down };

/// Faults that apply to one direction of every connection of a listener.
struct direction_faults {
  milliseconds latency{0};  ///< Added to every chunk, counted from when the proxy read it.
  bool blackhole = false;   ///< Read nothing, forward nothing (data waits in the kernel) until off.

  bool operator==(const direction_faults&) const = default;
};

/// The faults of one listener, or the global faults that apply to every listener.
struct fault_state {
  direction_faults up;
  direction_faults down;
  bool drop_new = false;  ///< Close new connections as soon as they are accepted.

  const direction_faults& at(direction d) const { return d == direction::up ? up : down; }
  direction_faults& at(direction d) { return d == direction::up ? up : down; }
  bool healthy() const { return *this == fault_state{}; }
  bool operator==(const fault_state&) const = default;
};

/// What a listener suffers: its own faults plus the global ones (latencies add up).
fault_state combine(const fault_state& own, const fault_state& global);

/// When a chunk read at `read_at` may be written on: nullopt while the direction is blackholed
/// (hold it until the faults change), else read_at + latency.
std::optional<clock::time_point> forward_time(const fault_state& faults, direction d,
                                              clock::time_point read_at);

/// Which sockets a reset aborts with an RST (SO_LINGER 0); the other side is closed normally.
enum class reset_side { client, server, both };

/// One control command. Grammar (one per line, words separated by blanks):
///   latency TARGET up|down|both MS     added latency per chunk (0 removes it)
///   blackhole TARGET up|down|both on|off
///   drop TARGET on|off                 close new connections on accept
///   reset TARGET client|server|both    abort the existing connections now (RST)
///   heal TARGET                        remove every fault of TARGET
///   status                             describe every listener's faults
/// TARGET is a listener name, `global` (faults added to every listener) or, for reset and heal,
/// `all` (every listener and the global faults).
struct command {
  enum class kind { latency, blackhole, drop, reset, heal, status };
  kind what = kind::status;
  std::string target;
  bool up = false;    ///< latency, blackhole: applies to client to server
  bool down = false;  ///< latency, blackhole: applies to server to client
  milliseconds latency{0};
  bool on = false;  ///< blackhole, drop
  reset_side side = reset_side::both;
};

/// Parses one line; a string is the error message.
std::variant<command, std::string> parse_command(std::string_view line);

/// The faults of every listener. `apply` validates targets against the known listeners.
class fault_table {
 public:
  explicit fault_table(std::vector<std::string> listener_names);

  /// Applies a command. Returns the reply line ("ok ..." or "error ...") and, for a reset, the
  /// listeners whose connections must be aborted.
  struct outcome {
    std::string reply;
    std::vector<std::string> reset_listeners;
    reset_side side = reset_side::both;
  };
  outcome apply(const command& c);

  /// The faults listener `name` suffers now (own + global).
  fault_state effective(const std::string& name) const;
  /// One line: `name: up=latency/blackhole down=... drop=...; ...`.
  std::string describe() const;
  bool knows(const std::string& name) const { return listeners_.count(name) != 0; }

 private:
  std::optional<std::vector<fault_state*>> targets(const std::string& target, bool allow_all);

  std::map<std::string, fault_state> listeners_;
  fault_state global_;
};

}  // namespace s3lect::chaos
