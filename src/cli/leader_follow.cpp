#include "cli/leader_follow.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

/// Below the leaders' default max_watch (60 s), so that a watch is normally ended by us and not
/// shortened; a timeout only re-opens it on the same connection.
constexpr std::chrono::milliseconds watch_time{std::chrono::seconds{30}};

}  // namespace

bool can_follow(const lock_record& record, bool have_ca) {
  if (record.released || record.leader_addr.empty()) return false;
  return !record.key_pin.empty() || have_ca;
}

asio::awaitable<follow_end> follow_leader(leader_endpoint_client& client, const lock_record& record,
                                          signal_inbox& signals, std::string& problem) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  for (;;) {
    auto woken = co_await (
        client.async_watch(record.leader_addr, record.key_pin, record.term, watch_time, token) ||
        signals.wait());
    // Only stop signals are caught; one that came as the answer did still counts.
    if (woken.index() == 1 || signals.take()) co_return follow_end::stopped;
    const auto& [error, answer] = std::get<0>(woken);
    if (error) {
      problem = error.message();
      co_return follow_end::failed;
    }
    if (answer.leads && answer.leader_id != record.leader_id) co_return follow_end::changed;
    switch (answer.end) {
      case leader_watch_end::changed:
        co_return follow_end::changed;
      case leader_watch_end::timeout:
        break;
      case leader_watch_end::not_held:
        problem = "it does not hold watches";
        co_return follow_end::failed;
    }
  }
}

}  // namespace s3lect::cli
