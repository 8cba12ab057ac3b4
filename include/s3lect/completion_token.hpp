// The default completion token of s3lect's asynchronous operations, in a header of its own so
// that a class with async_* members needs nothing else from the library to declare them.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <boost/asio/use_awaitable.hpp>

namespace s3lect::inline v1 {

/// The default completion token of every s3lect operation: `co_await op(...)` yields the result
/// and throws boost::system::system_error on failure. Pass `as_tuple(use_awaitable)`, a callback,
/// `use_future` or `deferred` instead as with any Asio operation.
using default_token = boost::asio::use_awaitable_t<>;

}  // namespace s3lect::inline v1
