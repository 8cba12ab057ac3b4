// A loopback TCP forwarder to put in front of a real server, so a test can make the "server"
// vanish: stop() closes the listener and every forwarded connection, like a crashed store.
// Byte-level, so it carries TLS unchanged. Own thread and io_context; plain Asio.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <string>
#include <thread>

namespace s3lect::test {

class tcp_forwarder {
 public:
  /// Listens on `listen_address` (a loopback address) at `listen_port` (0: an ephemeral one)
  /// and forwards each connection to `target_host`:`target_port`.
  tcp_forwarder(std::string target_host, std::uint16_t target_port,
                const std::string& listen_address = "127.0.0.1", std::uint16_t listen_port = 0)
      : target_host_(std::move(target_host)),
        target_port_(target_port),
        acceptor_(io_, {boost::asio::ip::make_address(listen_address), listen_port}),
        port_(acceptor_.local_endpoint().port()) {
    boost::asio::co_spawn(io_, accept_loop(), boost::asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  ~tcp_forwarder() {
    stop();
    io_.stop();
    thread_.join();
  }

  tcp_forwarder(const tcp_forwarder&) = delete;
  tcp_forwarder& operator=(const tcp_forwarder&) = delete;

  std::uint16_t port() const { return port_; }

  /// Closes the listener and all forwarded connections; returns when they are closed.
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    std::promise<void> done;
    boost::asio::post(io_, [this, &done] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      for (auto& socket : sockets_) socket->close(ignored);
      done.set_value();
    });
    done.get_future().wait();
  }

 private:
  using tcp = boost::asio::ip::tcp;
  using socket_ptr = std::shared_ptr<tcp::socket>;

  boost::asio::awaitable<void> accept_loop() {
    boost::system::error_code ec;
    auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
    tcp::resolver resolver(io_);
    for (;;) {
      auto client = std::make_shared<tcp::socket>(io_);
      co_await acceptor_.async_accept(*client, token);
      if (ec) co_return;
      auto server = std::make_shared<tcp::socket>(io_);
      auto endpoints =
          co_await resolver.async_resolve(target_host_, std::to_string(target_port_), token);
      if (ec) continue;
      co_await boost::asio::async_connect(*server, endpoints, token);
      if (ec) continue;
      sockets_.push_back(client);
      sockets_.push_back(server);
      boost::asio::co_spawn(io_, pump(client, server), boost::asio::detached);
      boost::asio::co_spawn(io_, pump(server, client), boost::asio::detached);
    }
  }

  /// Copies bytes from `from` to `to` until either side fails, then closes both.
  static boost::asio::awaitable<void> pump(socket_ptr from, socket_ptr to) {
    boost::system::error_code ec;
    auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
    std::array<char, 16384> data;
    for (;;) {
      const std::size_t n = co_await from->async_read_some(boost::asio::buffer(data), token);
      if (ec) break;
      co_await boost::asio::async_write(*to, boost::asio::buffer(data.data(), n), token);
      if (ec) break;
    }
    from->close(ec);
    to->close(ec);
  }

  std::string target_host_;
  std::uint16_t target_port_;
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::uint16_t port_;
  std::list<socket_ptr> sockets_;  // used on the forwarder's thread only
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace s3lect::test
