// The short names of the two Beast translation units of net, http_client.cpp and
// http_server.cpp; include it nowhere else.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/error_code.hpp>

namespace s3lect::inline v1::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

/// A plain socket under TLS, without beast::tcp_stream: deadlines close the socket instead of
/// arming a timer for every read and write (see http_server.cpp's server_connection).
using tls_stream = ssl::stream<tcp::socket>;

}  // namespace s3lect::inline v1::detail
