// One accepted connection of the HTTP server skeleton and its watchdog: http_server.cpp's
// only, as it names the Beast stream types.
#pragma once

#include "beast_names.hpp"
#include "certificate_names.hpp"
#include "connection_admission.hpp"

#include <boost/asio/steady_timer.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace s3lect::inline v1::detail {

using clock_type = std::chrono::steady_clock;

/// One accepted connection, listed so that a stop can close it. Shared by its coroutine and its
/// watchdog's pending wait, so that neither outlives it.
struct server_connection : std::enable_shared_from_this<server_connection> {
  enum class phase { handshake, idle, reading, answering, writing };

  server_connection(tcp::socket socket, ssl::context* tls, std::chrono::milliseconds tick,
                    const tcp::endpoint& remote)
      : stream(make_stream(std::move(socket), tls)),
        peer_address(remote.address()),
        source(source_of(remote.address())),
        watchdog(socket_of().get_executor()),
        longest_wait(tick) {}

  tcp::socket& socket_of() {
    if (auto* tls = std::get_if<tls_stream>(&stream)) return tls->next_layer();
    return std::get<tcp::socket>(stream);
  }

  /// Makes every pending operation on the connection complete at once.
  void close() {
    error_code ignored;
    socket_of().close(ignored);
  }

  /// Closes the connection unless it is done by `when` (time_point::max(): no deadline).
  /// Costs no timer operation while deadlines only move later, which they do on the request
  /// path: the watchdog never sleeps longer than `longest_wait` (the read timeout), and every
  /// deadline set is at least that far away.
  void set_deadline(clock_type::time_point when) {
    deadline = when;
    if (!watching) {
      watching = true;
      arm();
    } else if (when < armed_for) {
      watchdog.cancel();  // the wake-up re-arms for the new deadline
    }
  }

  /// After a successful handshake: whether the client presented a certificate that verified.
  /// A server without CAs asks for none (and a client may send one only when asked); one with
  /// CAs fails the handshake of a certificate that does not verify.
  void note_client_certificate(tls_stream& tls) {
    SSL* ssl = tls.native_handle();
    verified_client =
        SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
    if (verified_client) client_names = peer_certificate_names(ssl);
  }

  /// Ends the watchdog: the connection's coroutine is done with it.
  void finish() {
    finished = true;
    watchdog.cancel();
  }

  std::variant<tcp::socket, tls_stream> stream;
  phase state = phase::handshake;
  bool timed_out = false;  ///< The watchdog closed the connection.
  /// Reused for every answer, so that keep-alive requests do not allocate one each.
  std::string output;
  const boost::asio::ip::address peer_address;
  const source_key source;
  /// The TLS client presented a certificate the server verified (set after the handshake).
  bool verified_client = false;
  /// The verified certificate's names (peer_certificate_names), for binding claims to it.
  std::vector<std::string> client_names;
  bool holds_watch = false;   ///< Holds a watch: out of the general pool.
  bool first_request = true;  ///< No complete request read yet.
  clock_type::time_point first_request_deadline = clock_type::time_point::max();

 private:
  static std::variant<tcp::socket, tls_stream> make_stream(tcp::socket socket, ssl::context* tls) {
    if (tls)
      return std::variant<tcp::socket, tls_stream>(std::in_place_type<tls_stream>,
                                                   std::move(socket), *tls);
    return std::variant<tcp::socket, tls_stream>(std::move(socket));
  }

  void arm() {
    armed_for = std::min(deadline, clock_type::now() + longest_wait);
    watchdog.expires_at(armed_for);
    watchdog.async_wait([self = shared_from_this()](error_code) { self->wake(); });
  }

  void wake() {
    if (finished) return;
    if (clock_type::now() >= deadline) {
      timed_out = true;
      watching = false;
      close();
      return;
    }
    arm();
  }

  asio::steady_timer watchdog;
  const clock_type::duration longest_wait;
  clock_type::time_point deadline = clock_type::time_point::max();
  clock_type::time_point armed_for = clock_type::time_point::max();
  bool watching = false;
  bool finished = false;
};

}  // namespace s3lect::inline v1::detail
