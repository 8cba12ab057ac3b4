// Running one coroutine of a subcommand to completion on its own io_context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <utility>

namespace s3lect::cli {

/// Runs `task` on `io` and returns its result, or rethrows what it threw. The io_context is
/// stopped when `task` completes: whatever else it serves (a detached observer) ends with it.
template <class T>
T run_to_completion(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::optional<T> result;
  std::exception_ptr failure;
  boost::asio::co_spawn(io, std::move(task),
                        [&io, &result, &failure](std::exception_ptr error, T value) {
                          failure = error;
                          result.emplace(std::move(value));
                          io.stop();
                        });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

/// The same for a task without a result.
inline void run_to_completion(boost::asio::io_context& io, boost::asio::awaitable<void> task) {
  std::exception_ptr failure;
  boost::asio::co_spawn(io, std::move(task), [&io, &failure](std::exception_ptr error) {
    failure = error;
    io.stop();
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace s3lect::cli
