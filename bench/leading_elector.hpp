// An elector that leads its own key on an in-process memory_store: its health_source() is what the
// health benchmarks serve, so they measure what `s3lect run --peer` serves (the real elector's
// snapshot), not a stand-in.
#pragma once

#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace s3lect::bench {

class leading_elector {
 public:
  /// Campaigns on `io` and runs it until the elector leads (a fresh key: at once). The caller
  /// keeps running `io` afterwards (renewals every 5 s), or not: snapshot() needs no running.
  explicit leading_elector(boost::asio::io_context& io,
                           std::string server_address = "127.0.0.1:8443")
      : storage_(io.get_executor(), std::make_shared<memory_store>()),
        elector_(io.get_executor(), storage_, make_config(std::move(server_address))) {
    elector_.start();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    while (!elector_.is_leader()) {
      if (std::chrono::steady_clock::now() > give_up)
        throw std::runtime_error("the elector did not become leader within 10 s");
      io.run_one_for(std::chrono::milliseconds{100});
    }
  }

  s3lect::elector& get() noexcept { return elector_; }

 private:
  static elector_config make_config(std::string server_address) {
    elector_config config;
    config.lock_key = "bench/health.json";
    config.server_id = "bench-node-a";
    config.server_address = std::move(server_address);
    return config;
  }

  memory_storage storage_;
  s3lect::elector elector_;
};

}  // namespace s3lect::bench
