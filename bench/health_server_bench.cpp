// A health_server for throughput measurements (bench/health_wrk.sh): one io_context thread, as
// in `s3lect run --peer`, serving an elector that leads its own key on memory_store.
//
// usage: bench_health_server IP:PORT CERT_PEM KEY_PEM
// Prints "listening on IP:PORT" once it accepts connections; SIGINT or SIGTERM stops it
// gracefully and it prints the server's counters.
#include "leading_elector.hpp"

#include <s3lect/health.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: bench_health_server IP:PORT CERT_PEM KEY_PEM\n";
    return 2;
  }
  try {
    boost::asio::io_context io(1);
    s3lect::bench::leading_elector leader(io, argv[1]);

    s3lect::health_server_config config;
    config.bind_address = argv[1];
    config.tls.certificate_file = argv[2];
    config.tls.private_key_file = argv[3];
    s3lect::health_server server(io.get_executor(), leader.get().health_source(), config);
    if (const auto ec = server.start()) {
      std::cerr << "cannot listen on " << argv[1] << ": " << ec.message() << "\n";
      return 9;
    }
    std::cout << "listening on " << server.local_endpoint() << std::endl;

    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code, int) {
      server.async_stop([&](boost::system::error_code) {
        leader.get().async_stop([&](boost::system::error_code) { io.stop(); });
      });
    });
    io.run();

    const s3lect::health_server_stats stats = server.stats();
    std::cout << "connections " << stats.accepted_connections << ", requests " << stats.requests
              << ", failed handshakes " << stats.failed_handshakes << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
