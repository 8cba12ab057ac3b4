// Plumbing shared by the built-in credential providers: the outcome of one fetch, the snapshot
// of the environment they read, and a base class that runs a fetch as a coroutine.
#pragma once

#include <s3lect/credentials.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// What one fetch produced, as a value a coroutine can return.
struct fetch_outcome {
  boost::system::error_code ec;
  credentials_result result;
};

/// A failed fetch; `message` must already name the provider.
fetch_outcome fetch_failure(credentials_errc code, std::string message);

/// A successful fetch.
fetch_outcome fetch_success(aws_credentials credentials);

/// The environment variables the providers read, captured once so that a chain behaves the same
/// for its whole life and never races setenv() in another thread.
class environment_snapshot {
 public:
  /// Every variable a provider or the profile lookup reads, from the process environment.
  static environment_snapshot capture();

  /// Sets one variable (tests build snapshots by hand).
  environment_snapshot& set(std::string name, std::string value);

  /// The value; "" when unset or empty (the SDKs treat both alike).
  std::string get(std::string_view name) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

/// True for "true" in any letter case, as the SDKs read boolean variables.
bool is_true_text(std::string_view value);

/// Reads a small local file (profiles, tokens) whole. nullopt when it does not exist; on any
/// other failure nullopt and `problem` set to a message that names the path, not the content.
std::optional<std::string> read_small_file(const std::string& path, std::string& problem,
                                           std::size_t max_bytes = 1024 * 1024);

/// `text` without leading and trailing spaces, tabs, CR and LF.
std::string_view trim_space(std::string_view text);

/// True when `value` can travel in an HTTP header and a SigV4 credential scope: no control
/// characters, no spaces.
bool is_header_safe(std::string_view value);

/// "****" plus the last four characters of an access key id, for logs and the CLI.
std::string masked_key_id(std::string_view access_key_id);

/// Checks the fields of freshly fetched credentials: both keys present and header-safe, the
/// token header-safe, not already expired at `now`. Returns an empty string or the problem,
/// naming the field but never its value.
std::string credentials_problem(const aws_credentials& credentials,
                                std::chrono::system_clock::time_point now);

/// Base of the built-in providers: fetch() runs as a coroutine on a fresh strand of the
/// executor while a shared_ptr keeps the provider alive; its outcome completes the handler
/// through the handler's associated executor.
class coroutine_provider : public credentials_provider,
                           public std::enable_shared_from_this<coroutine_provider> {
 public:
  explicit coroutine_provider(boost::asio::any_io_executor executor)
      : executor_(std::move(executor)) {}

  const boost::asio::any_io_executor& executor() const noexcept { return executor_; }

  /// The fetch itself. Runs on a strand; must not throw except bad_alloc.
  virtual boost::asio::awaitable<fetch_outcome> fetch() = 0;

 protected:
  void fetch_impl(boost::asio::any_completion_handler<credentials_signature> handler) final;

 private:
  boost::asio::any_io_executor executor_;
};

/// Completes `handler` with (ec, result) through a post to its associated executor (default
/// `fallback`), so no handler ever runs inside the function that started it.
void post_completion(boost::asio::any_completion_handler<credentials_signature> handler,
                     const boost::asio::any_io_executor& fallback, boost::system::error_code ec,
                     credentials_result result);

}  // namespace s3lect::inline v1::detail
