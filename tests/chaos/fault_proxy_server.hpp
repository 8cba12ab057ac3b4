// A fault-injecting TCP proxy on one io_context: several named loopback listeners forward to one
// upstream, each with its own faults (fault_proxy_control.hpp), changed at run time through a
// line-based control port or `execute`. No threads: everything runs on the given executor.
#pragma once

#include "fault_proxy_control.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace s3lect::chaos {

class fault_proxy {
 public:
  struct listen_spec {
    std::string name;
    boost::asio::ip::tcp::endpoint endpoint;  ///< Port 0: any free port.
  };

  /// Binds every listener and the control port (if `control` is set) at once; throws
  /// boost::system::system_error when one cannot be bound.
  fault_proxy(boost::asio::any_io_executor executor, boost::asio::ip::tcp::endpoint upstream,
              const std::vector<listen_spec>& listeners,
              std::optional<boost::asio::ip::tcp::endpoint> control);
  ~fault_proxy();
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;

  /// Starts accepting on every listener and the control port. Runs until `stop`.
  void start();
  /// Closes every listener and connection; pending coroutines finish with errors.
  void stop();

  /// The bound address of listener `name`.
  boost::asio::ip::tcp::endpoint listener_endpoint(const std::string& name) const;
  /// The bound control address (unspecified when there is no control port).
  boost::asio::ip::tcp::endpoint control_endpoint() const;

  /// Executes one control line as the control port would; returns the reply line. Must be
  /// called on the proxy's executor (or while its io_context is not running).
  std::string execute(std::string_view line);

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

/// True for 127.0.0.0/8 and ::1: the proxy never listens or forwards anywhere else.
bool is_loopback(const boost::asio::ip::address& address);

}  // namespace s3lect::chaos
