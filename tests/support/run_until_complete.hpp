// Runs one asynchronous operation to completion from a plain (non-coroutine) test body, so the
// test can use ASSERT_* on the result.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

namespace s3lect::test {

/// Calls `start(handler)` and runs `io` until the handler was called with (error_code, Result).
/// Throws std::runtime_error when `io` runs out of work first or nothing happens for `idle`.
template <class Result, class Start>
std::pair<boost::system::error_code, Result> run_until_complete(
    boost::asio::io_context& io, Start start,
    std::chrono::steady_clock::duration idle = std::chrono::seconds(60)) {
  std::optional<std::pair<boost::system::error_code, Result>> out;
  start(
      [&out](boost::system::error_code ec, Result result) { out.emplace(ec, std::move(result)); });
  io.restart();
  while (!out && io.run_one_for(idle) != 0) {
  }
  if (!out) throw std::runtime_error("the operation never completed");
  return std::move(*out);
}

}  // namespace s3lect::test
