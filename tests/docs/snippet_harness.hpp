// What the code fragments of README.md and docs/*.md may use without declaring it: the names an
// application around them would have (its io_context, its store, its own work and logger).
// tests/docs/extract_snippets.cpp puts each fragment in a function whose parameters are
// S3LECT_DOCS_NAMES, after `using namespace s3lect_docs::names`. Everything of s3lect a fragment
// uses must be named in it (s3lect::..., and the awaitable operators' using-directive where it
// uses `||` or `&&`), as a reader copying it would need. The fragments are compiled, never linked
// or run: the functions here are declared only.
#pragma once

#include <s3lect/s3lect.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

// Two conventions the docs share with the examples: the namespace alias and chrono literals.
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace s3lect_docs::names {

/// The application's leader-only work, given the fencing token.
asio::awaitable<void> run_leader_work(std::uint64_t term);
asio::awaitable<void> do_leader_work(std::uint64_t term);
/// getting-started's coroutine (an excerpt of examples/leader_worker.cpp).
asio::awaitable<void> lead_when_elected(s3lect::elector& elector, std::string id, int beats);

/// What the application does when the store refuses its elector for good (async_run's error).
void report_refusal(boost::system::error_code ec);

/// The application's own logger.
struct logger {
  void write(std::string_view level, std::string_view line);
};

/// A request to a service that takes fenced writes, as Beast's would be read.
struct http_request {
  std::string_view operator[](std::string_view field) const;
  const std::string& body() const;
};

/// The service's answers and its state.
void reply(int status, std::string text);
void respond(int status, std::string text);
void apply(const std::string& body);
std::uint64_t load_highest_term();

}  // namespace s3lect_docs::names

// The variables a fragment finds in scope, as parameters of the function it is compiled in.
#define S3LECT_DOCS_NAMES                                                                         \
  [[maybe_unused]] asio::io_context &io, [[maybe_unused]] s3lect::storage &store,                 \
      [[maybe_unused]] const s3lect::s3_config &s3_config,                                        \
      [[maybe_unused]] const s3lect::elector_config &elector_config,                              \
      [[maybe_unused]] s3lect::elector_config &config, [[maybe_unused]] s3lect::elector &elector, \
      [[maybe_unused]] s3lect::elector &election,                                                 \
      [[maybe_unused]] s3lect::elector &orders_elector,                                           \
      [[maybe_unused]] s3lect::elector &billing_elector,                                          \
      [[maybe_unused]] const s3lect::leadership_lease &lease, [[maybe_unused]] std::string csv,   \
      [[maybe_unused]] const s3lect_docs::names::http_request &request,                           \
      [[maybe_unused]] s3lect_docs::names::logger &my_logger, [[maybe_unused]] char **argv,       \
      [[maybe_unused]] int beats

using namespace s3lect_docs::names;
