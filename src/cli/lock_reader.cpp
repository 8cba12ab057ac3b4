#include "cli/lock_reader.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace s3lect::cli {

namespace asio = boost::asio;

namespace {

/// One GET attempt, its data passed as parameters so it owns them (GCC 12, docs/architecture.md).
asio::awaitable<std::tuple<boost::system::error_code, get_result>> get_attempt(storage& store,
                                                                               std::string key) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  co_return co_await store.async_get(std::move(key), token);
}

}  // namespace

asio::awaitable<lock_read> read_lock(storage& store, std::string key, retry_policy policy) {
  auto attempt = [&store, key] { return get_attempt(store, key); };
  auto [ec, result] = co_await async_retry(std::move(policy), attempt);
  lock_read read;
  read.error = ec;
  read.info = std::move(result.info);
  read.found = std::move(result.found);
  if (!ec && read.found) {
    read.decoded = read.found->truncated ? decode_truncated_record(read.found->body.size())
                                         : decode_record(read.found->body);
  }
  co_return read;
}

std::string describe_store_error(const boost::system::error_code& error,
                                 const response_info& info) {
  std::string text = error.message();
  if (info.http_status != 0) {
    text += " (HTTP " + std::to_string(info.http_status);
    if (!info.error_code.empty()) text += " " + info.error_code;
    text += ")";
    if (!info.message.empty() && info.message != info.error_code) text += ": " + info.message;
  } else if (!info.message.empty()) {
    text += ": " + info.message;
  }
  return text;
}

}  // namespace s3lect::cli
