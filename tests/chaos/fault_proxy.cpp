// s3lect_fault_proxy: a fault-injecting TCP proxy for chaos tests, loopback only.
//
//   s3lect_fault_proxy --upstream 127.0.0.1:7480 --listen node1=0 --listen node2=0 --control 0
//
// prints one line per bound address on stdout, then `ready`:
//   listen node1 127.0.0.1:41233
//   control 127.0.0.1:40111
//   ready
// and takes commands on the control port, one per line, answering one line each (`ok ...` or
// `error ...`); see fault_proxy_control.hpp or docs/chaos.md for the commands. SIGINT or SIGTERM
// ends it.
#include "command_line.hpp"
#include "fault_proxy_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <charconv>
#include <csignal>
#include <iostream>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

const char* usage =
    "usage: s3lect_fault_proxy [--upstream HOST:PORT] --listen NAME=[HOST:]PORT ... "
    "[--control [HOST:]PORT]\n"
    "  --upstream   where every listener forwards to (default 127.0.0.1:7480)\n"
    "  --listen     a named listener (port 0: any free port); repeat for several\n"
    "  --control    the control port (line protocol: latency, blackhole, drop, reset, heal,\n"
    "               status; see docs/chaos.md)\n"
    "Loopback addresses only. Prints `listen NAME ADDR`, `control ADDR` and `ready`.\n";

/// "[HOST:]PORT" with HOST defaulting to 127.0.0.1.
tcp::endpoint parse_endpoint(std::string_view text) {
  std::string host = "127.0.0.1";
  std::string_view port_text = text;
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = std::string(text.substr(0, colon));
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
    throw std::invalid_argument("bad port in '" + std::string(text) + "'");
  }
  return tcp::endpoint(asio::ip::make_address(host), static_cast<unsigned short>(port));
}

std::string to_string(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    tcp::endpoint upstream = parse_endpoint("127.0.0.1:7480");
    std::vector<s3lect::chaos::fault_proxy::listen_spec> listeners;
    std::optional<tcp::endpoint> control;
    const auto take = [&](const std::string& arg, const std::string& value) {
      if (arg == "--upstream") {
        upstream = parse_endpoint(value);
      } else if (arg == "--listen") {
        const auto eq = value.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("--listen NAME=[HOST:]PORT");
        listeners.push_back({value.substr(0, eq), parse_endpoint(value.substr(eq + 1))});
      } else if (arg == "--control") {
        control = parse_endpoint(value);
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    };
    if (!s3lect::chaos::read_option_pairs(argc, argv, usage, take)) return 0;
    if (listeners.empty()) throw std::invalid_argument("at least one --listen is needed");

    asio::io_context io;
    s3lect::chaos::fault_proxy proxy(io.get_executor(), upstream, listeners, control);
    for (const auto& spec : listeners) {
      std::cout << "listen " << spec.name << " " << to_string(proxy.listener_endpoint(spec.name))
                << "\n";
    }
    if (control) std::cout << "control " << to_string(proxy.control_endpoint()) << "\n";
    std::cout << "ready" << std::endl;
    proxy.start();
    // A peer that vanished must not kill us: write errors are handled per connection.
    std::signal(SIGPIPE, SIG_IGN);
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&proxy, &io](boost::system::error_code error, int signal) {
      if (!error) std::cerr << "s3lect_fault_proxy: stopping on signal " << signal << "\n";
      proxy.stop();
      io.stop();
    });
    io.run();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "s3lect_fault_proxy: " << e.what() << "\n" << usage;
    return 2;
  }
}
