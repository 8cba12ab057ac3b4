// The default completion token of s3lect's asynchronous operations, in a header of its own so
// that a class with async_* members needs nothing else from the library to declare them; and
// with_diagnostics, the token adapter behind it, which turns a failed store operation into an
// s3lect::store_error that keeps what the store said.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/response_info.hpp>
#include <s3lect/store_error.hpp>

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <concepts>
#include <exception>
#include <type_traits>
#include <utility>

namespace s3lect::inline v1 {

/// A completion token adapter, as Boost.MySQL's `with_diagnostics`: an operation that completes
/// with `void(error_code, Args...)` completes `Token` with `void(std::exception_ptr, Args...)`
/// instead, the exception_ptr null on success. On failure it holds an s3lect::store_error
/// (store_error.hpp) when the result carries what the store said (a get_result, put_result,
/// response_info or fenced result), else a boost::system::system_error. With `use_awaitable` the
/// awaited operation throws that exception; with a callback the callback receives it.
template <class Token>
struct with_diagnostics_t {
  Token token{};  ///< The token that receives the transformed completion.
};

/// Adapts `token`: `co_await store.async_get(key, with_diagnostics(use_awaitable))`.
template <class Token>
with_diagnostics_t<std::decay_t<Token>> with_diagnostics(Token&& token) {
  return {std::forward<Token>(token)};
}

/// The default completion token of every s3lect operation: `co_await op(...)` yields the result
/// and throws on failure, an s3lect::store_error (with `info()`, what the store said) for store
/// operations, a boost::system::system_error for the others. Pass `as_tuple(use_awaitable)`, a
/// callback, `use_future` or `deferred` instead as with any Asio operation.
using default_token = with_diagnostics_t<boost::asio::use_awaitable_t<>>;

namespace detail {

/// A result that carries what the store answered, as a member `info` or by being one.
template <class T>
concept carries_store_answer = std::same_as<T, response_info> || requires(const T& result) {
  { result.info } -> std::convertible_to<const response_info&>;
};

template <class T>
const response_info& store_answer_of(const T& result) noexcept {
  if constexpr (std::same_as<T, response_info>) {
    return result;
  } else {
    return result.info;
  }
}

/// The exception for `ec` completing with `args`: a store_error when the one result carries the
/// store's answer, else a system_error.
template <class... Args>
std::exception_ptr exception_for(const boost::system::error_code& ec, const Args&... args) {
  if constexpr (sizeof...(Args) == 1 && (carries_store_answer<Args> && ...)) {
    return std::make_exception_ptr(store_error(ec, store_answer_of(args)...));
  } else {
    return std::make_exception_ptr(boost::system::system_error(ec));
  }
}

/// The handler with_diagnostics gives the operation: calls the adapted token's handler with an
/// exception_ptr for the error code. Its executor, allocator and cancellation slot are the
/// adapted handler's (boost::asio::associator below).
template <class Handler>
struct diagnostics_handler {
  Handler handler;

  template <class... Args>
  void operator()(const boost::system::error_code& ec, Args&&... args) {
    std::exception_ptr failure = ec ? exception_for(ec, std::as_const(args)...) : nullptr;
    std::move(handler)(std::move(failure), std::forward<Args>(args)...);
  }
};

/// Starts the operation with a diagnostics_handler around the adapted token's handler. A named
/// class rather than a lambda: it ends up inside the caller's co_await expression, where GCC 12
/// mishandles lambda temporaries (docs/architecture.md#gcc-12-coroutine-rules).
template <class Initiation>
struct diagnostics_initiation {
  Initiation initiation;

  template <class Handler, class... InitArgs>
  void operator()(Handler&& handler, InitArgs&&... args) {
    std::move(initiation)(
        diagnostics_handler<std::decay_t<Handler>>{std::forward<Handler>(handler)},
        std::forward<InitArgs>(args)...);
  }
  template <class Handler, class... InitArgs>
  void operator()(Handler&& handler, InitArgs&&... args) const {
    initiation(diagnostics_handler<std::decay_t<Handler>>{std::forward<Handler>(handler)},
               std::forward<InitArgs>(args)...);
  }
};

}  // namespace detail

}  // namespace s3lect::inline v1

namespace boost::asio {

/// with_diagnostics_t: `void(error_code, Args...)` becomes `void(std::exception_ptr, Args...)`.
template <class Token, class... Args>
struct async_result<s3lect::with_diagnostics_t<Token>, void(boost::system::error_code, Args...)> {
  template <class Initiation, class RawToken, class... InitArgs>
  static auto initiate(Initiation&& initiation, RawToken&& token, InitArgs&&... args) {
    return async_initiate<Token, void(std::exception_ptr, Args...)>(
        s3lect::detail::diagnostics_initiation<std::decay_t<Initiation>>{
            std::forward<Initiation>(initiation)},
        token.token, std::forward<InitArgs>(args)...);
  }
};

/// A diagnostics_handler is associated with what its inner handler is associated with.
template <template <class, class> class Associator, class Handler, class DefaultCandidate>
struct associator<Associator, s3lect::detail::diagnostics_handler<Handler>, DefaultCandidate>
    : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const s3lect::detail::diagnostics_handler<Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler);
  }
  static auto get(const s3lect::detail::diagnostics_handler<Handler>& h,
                  const DefaultCandidate& candidate) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler, candidate)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler, candidate);
  }
};

}  // namespace boost::asio
