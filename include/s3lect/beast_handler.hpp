// Opt-in adapter for applications that already run a Beast HTTP server: serve the health
// endpoint from their own request loop. Includes Beast, so only include it where Beast is
// already included; everything else about the endpoint is in health.hpp.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/health.hpp>

#include <boost/asio/compose.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <utility>

namespace s3lect::inline v1 {

/// The health request of a Beast request (method and target; headers and body do not matter).
template <class Body, class Fields>
health_request to_health_request(const boost::beast::http::request<Body, Fields>& request) {
  return {std::string(request.method_string()), std::string(request.target())};
}

/// A Beast response for `response`, in reply to a request of HTTP `version` whose keep-alive
/// wish was `keep_alive`; Content-Length is set.
inline boost::beast::http::response<boost::beast::http::string_body> to_beast_response(
    health_response response, unsigned version, bool keep_alive) {
  namespace http = boost::beast::http;
  http::response<http::string_body> message{static_cast<http::status>(response.status), version};
  for (auto& [name, value] : response.headers) message.set(name, value);
  message.body() = std::move(response.body);
  message.keep_alive(keep_alive);
  message.prepare_payload();
  return message;
}

/// Answers `request` at once (a watch is checked, not held): for a handler that cannot wait.
template <class Body, class Fields>
boost::beast::http::response<boost::beast::http::string_body> handle_health_request(
    const health_handler& handler, const boost::beast::http::request<Body, Fields>& request) {
  return to_beast_response(handler.handle(to_health_request(request)), request.version(),
                           request.keep_alive());
}

namespace detail {

/// The composed operation of async_handle_health_request.
struct beast_health_op {
  health_handler* handler;
  health_request request;
  unsigned version;
  bool keep_alive;

  template <class Self>
  void operator()(Self& self) {
    handler->async_handle(std::move(request), std::move(self));
  }

  template <class Self>
  void operator()(Self& self, boost::system::error_code ec, health_response response) {
    self.complete(ec, to_beast_response(std::move(response), version, keep_alive));
  }
};

}  // namespace detail

/// Answers `request`, holding a watch like health_handler::async_handle. Completes with
/// `void(error_code, http::response<http::string_body>)`; the error is set only when cancelled
/// or when the handler was destroyed. Cancellation: any type; operation_aborted.
template <class Body, class Fields, class CompletionToken = default_token>
auto async_handle_health_request(health_handler& handler,
                                 const boost::beast::http::request<Body, Fields>& request,
                                 CompletionToken&& token = {}) {
  using response_type = boost::beast::http::response<boost::beast::http::string_body>;
  return boost::asio::async_compose<CompletionToken,
                                    void(boost::system::error_code, response_type)>(
      detail::beast_health_op{&handler, to_health_request(request), request.version(),
                              request.keep_alive()},
      token, handler.get_executor());
}

}  // namespace s3lect::inline v1
