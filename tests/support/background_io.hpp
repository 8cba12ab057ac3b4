// An io_context running on a thread of its own, for tests that talk to a server with blocking
// sockets from the test body.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>

namespace s3lect::test {

/// Runs `io` on a thread until destroyed.
struct background_io {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work =
      boost::asio::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
  ~background_io() {
    work.reset();
    io.stop();
    thread.join();
  }
};

}  // namespace s3lect::test
