// Opening a listening socket, shared by the health and metrics servers.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

namespace s3lect::inline v1::detail {

/// Opens `acceptor` on `endpoint` with address reuse, binds and listens. Returns the error of
/// the first step that failed (the acceptor is then closed), else success with the bound
/// endpoint (the chosen port for port 0) in `bound`.
boost::system::error_code listen_on(boost::asio::ip::tcp::acceptor& acceptor,
                                    const boost::asio::ip::tcp::endpoint& endpoint,
                                    boost::asio::ip::tcp::endpoint& bound);

}  // namespace s3lect::inline v1::detail
