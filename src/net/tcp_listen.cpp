#include "tcp_listen.hpp"

namespace s3lect::inline v1::detail {

boost::system::error_code listen_on(boost::asio::ip::tcp::acceptor& acceptor,
                                    const boost::asio::ip::tcp::endpoint& endpoint,
                                    boost::asio::ip::tcp::endpoint& bound) {
  using boost::asio::ip::tcp;
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (!ec) bound = acceptor.local_endpoint(ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
  }
  return ec;
}

}  // namespace s3lect::inline v1::detail
