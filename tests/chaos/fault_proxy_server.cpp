#include "fault_proxy_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <list>
#include <map>
#include <stdexcept>

namespace s3lect::chaos {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using namespace asio::experimental::awaitable_operators;

namespace {
constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);
}

bool is_loopback(const asio::ip::address& address) {
  if (address.is_v4()) return (address.to_v4().to_uint() >> 24) == 127;
  return address.is_v6() && address.to_v6().is_loopback();
}

/// One proxied connection: the client's socket and ours to the upstream.
struct connection {
  explicit connection(tcp::socket accepted)
      : client(std::move(accepted)), server(client.get_executor()) {}

  /// Closes both sockets; `rst_client` / `rst_server` abort that side with an RST.
  void close(bool rst_client, bool rst_server) {
    if (closed) return;
    closed = true;
    error_code ignored;
    if (rst_client) client.set_option(asio::socket_base::linger(true, 0), ignored);
    if (rst_server) server.set_option(asio::socket_base::linger(true, 0), ignored);
    client.close(ignored);
    server.close(ignored);
  }

  tcp::socket client;
  tcp::socket server;
  bool closed = false;
};

struct listener {
  std::string name;
  tcp::acceptor acceptor;
  std::list<std::weak_ptr<connection>> connections;
};

struct fault_proxy::impl : std::enable_shared_from_this<impl> {
  impl(asio::any_io_executor executor, tcp::endpoint upstream_endpoint,
       std::vector<std::string> names)
      : upstream(upstream_endpoint),
        faults(std::move(names)),
        control(executor),
        changed(executor) {
    changed.expires_at(clock::time_point::max());
  }

  /// Wakes every pump that waits for the faults to change.
  void notify_change() { changed.cancel(); }

  std::string execute(std::string_view line) {
    auto parsed = parse_command(line);
    if (auto* error = std::get_if<std::string>(&parsed)) return "error " + *error;
    const command& c = std::get<command>(parsed);
    auto outcome = faults.apply(c);
    for (const auto& name : outcome.reset_listeners) {
      listener& l = *listeners.at(name);
      for (auto& weak : l.connections) {
        if (auto conn = weak.lock()) {
          conn->close(outcome.side != reset_side::server, outcome.side != reset_side::client);
        }
      }
      l.connections.clear();
    }
    notify_change();
    return outcome.reply;
  }

  tcp::endpoint upstream;
  fault_table faults;
  std::map<std::string, std::unique_ptr<listener>> listeners;
  tcp::acceptor control;
  asio::steady_timer changed;  ///< Never expires; cancelled to wake waiters on every change.
  bool stopped = false;
};

namespace {

/// Forwards one direction of a connection until end of stream or an error, applying the
/// listener's faults to every chunk.
asio::awaitable<void> pump(std::shared_ptr<fault_proxy::impl> proxy,
                           std::shared_ptr<connection> conn, std::string name, direction d) {
  tcp::socket& from = d == direction::up ? conn->client : conn->server;
  tcp::socket& to = d == direction::up ? conn->server : conn->client;
  std::vector<char> buffer(16 * 1024);
  asio::steady_timer delay(from.get_executor());
  for (;;) {
    // A blackholed direction does not even read: the data waits in the kernel, as it would in
    // a network that holds packets, and flows again on heal.
    while (!conn->closed && !forward_time(proxy->faults.effective(name), d, clock::now())) {
      co_await proxy->changed.async_wait(as_tuple_awaitable);
    }
    if (conn->closed) co_return;
    auto [read_error, size] =
        co_await from.async_read_some(asio::buffer(buffer), as_tuple_awaitable);
    const auto read_at = clock::now();
    if (read_error) {
      if (read_error == asio::error::eof && !conn->closed) {
        error_code ignored;
        to.shutdown(tcp::socket::shutdown_send, ignored);
      } else {
        conn->close(false, false);
        proxy->notify_change();
      }
      co_return;
    }
    for (;;) {
      if (conn->closed) co_return;
      const auto when = forward_time(proxy->faults.effective(name), d, read_at);
      if (when && *when <= clock::now()) break;
      delay.expires_at(when ? *when : clock::time_point::max());
      co_await (delay.async_wait(as_tuple_awaitable) ||
                proxy->changed.async_wait(as_tuple_awaitable));
    }
    auto [write_error, written] =
        co_await asio::async_write(to, asio::buffer(buffer.data(), size), as_tuple_awaitable);
    if (write_error) {
      conn->close(false, false);
      proxy->notify_change();
      co_return;
    }
  }
}

asio::awaitable<void> serve_connection(std::shared_ptr<fault_proxy::impl> proxy,
                                       std::shared_ptr<connection> conn, std::string name) {
  auto [connect_error] = co_await conn->server.async_connect(proxy->upstream, as_tuple_awaitable);
  if (connect_error) {
    conn->close(true, false);  // as the upstream refused us, refuse the client
    co_return;
  }
  error_code ignored;
  conn->client.set_option(tcp::no_delay(true), ignored);
  conn->server.set_option(tcp::no_delay(true), ignored);
  co_await (pump(proxy, conn, name, direction::up) && pump(proxy, conn, name, direction::down));
  conn->close(false, false);
}

asio::awaitable<void> accept_loop(std::shared_ptr<fault_proxy::impl> proxy, listener* l) {
  for (;;) {
    auto [error, socket] = co_await l->acceptor.async_accept(as_tuple_awaitable);
    if (proxy->stopped) co_return;
    if (error) {
      if (error == asio::error::operation_aborted) co_return;
      continue;  // EMFILE and the like: keep serving the others
    }
    if (proxy->faults.effective(l->name).drop_new) {
      error_code ignored;
      socket.close(ignored);
      continue;
    }
    auto conn = std::make_shared<connection>(std::move(socket));
    l->connections.remove_if([](const std::weak_ptr<connection>& w) { return w.expired(); });
    l->connections.push_back(conn);
    asio::co_spawn(l->acceptor.get_executor(), serve_connection(proxy, conn, l->name),
                   asio::detached);
  }
}

asio::awaitable<void> control_session(std::shared_ptr<fault_proxy::impl> proxy,
                                      tcp::socket socket) {
  std::string pending;
  for (;;) {
    auto [error, size] = co_await asio::async_read_until(socket, asio::dynamic_buffer(pending),
                                                         '\n', as_tuple_awaitable);
    if (error) co_return;
    std::string line = pending.substr(0, size - 1);
    pending.erase(0, size);
    std::string reply = proxy->stopped ? "error stopped" : proxy->execute(line);
    reply += '\n';
    auto [write_error, written] =
        co_await asio::async_write(socket, asio::buffer(reply), as_tuple_awaitable);
    if (write_error) co_return;
  }
}

asio::awaitable<void> control_loop(std::shared_ptr<fault_proxy::impl> proxy) {
  for (;;) {
    auto [error, socket] = co_await proxy->control.async_accept(as_tuple_awaitable);
    if (proxy->stopped || error == asio::error::operation_aborted) co_return;
    if (error) continue;
    asio::co_spawn(proxy->control.get_executor(), control_session(proxy, std::move(socket)),
                   asio::detached);
  }
}

void open_acceptor(tcp::acceptor& acceptor, const tcp::endpoint& endpoint) {
  if (!is_loopback(endpoint.address())) {
    throw std::invalid_argument("refusing to listen on " + endpoint.address().to_string() +
                                ": loopback addresses only");
  }
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen();
}

}  // namespace

fault_proxy::fault_proxy(asio::any_io_executor executor, tcp::endpoint upstream,
                         const std::vector<listen_spec>& listeners,
                         std::optional<tcp::endpoint> control) {
  if (!is_loopback(upstream.address())) {
    throw std::invalid_argument("refusing to forward to " + upstream.address().to_string() +
                                ": loopback addresses only");
  }
  std::vector<std::string> names;
  for (const auto& spec : listeners) names.push_back(spec.name);
  impl_ = std::make_shared<impl>(executor, upstream, names);
  for (const auto& spec : listeners) {
    if (spec.name.empty() || spec.name == "global" || spec.name == "all" ||
        impl_->listeners.count(spec.name) != 0) {
      throw std::invalid_argument("bad or duplicate listener name '" + spec.name + "'");
    }
    auto l = std::make_unique<listener>(listener{spec.name, tcp::acceptor(executor), {}});
    open_acceptor(l->acceptor, spec.endpoint);
    impl_->listeners.emplace(spec.name, std::move(l));
  }
  if (control) open_acceptor(impl_->control, *control);
}

fault_proxy::~fault_proxy() {
  stop();
}

void fault_proxy::start() {
  for (auto& [name, l] : impl_->listeners) {
    asio::co_spawn(l->acceptor.get_executor(), accept_loop(impl_, l.get()), asio::detached);
  }
  if (impl_->control.is_open()) {
    asio::co_spawn(impl_->control.get_executor(), control_loop(impl_), asio::detached);
  }
}

void fault_proxy::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  error_code ignored;
  for (auto& [name, l] : impl_->listeners) {
    l->acceptor.close(ignored);
    for (auto& weak : l->connections) {
      if (auto conn = weak.lock()) conn->close(false, false);
    }
  }
  impl_->control.close(ignored);
  impl_->notify_change();
}

tcp::endpoint fault_proxy::listener_endpoint(const std::string& name) const {
  return impl_->listeners.at(name)->acceptor.local_endpoint();
}

tcp::endpoint fault_proxy::control_endpoint() const {
  error_code ignored;
  return impl_->control.local_endpoint(ignored);
}

std::string fault_proxy::execute(std::string_view line) {
  return impl_->execute(line);
}

}  // namespace s3lect::chaos
