// Records leadership periods the way a leader-only worker sees them, and checks the safety
// property over them: no two periods overlap, and terms strictly increase.
#pragma once

#include <s3lect/elector.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace s3lect::test {

/// One leadership period as the elector's users saw it.
struct leadership_period {
  int node = 0;
  std::uint64_t term = 0;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> end;
};

/// Appends every leadership period of `e` to `periods` until the elector stops.
inline boost::asio::awaitable<void> record_periods(elector& e, int node,
                                                   std::vector<leadership_period>& periods) {
  namespace asio = boost::asio;
  for (;;) {
    auto [ec, lease] = co_await e.async_wait_for_leadership(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    periods.push_back({node, lease.term, std::chrono::steady_clock::now(), std::nullopt});
    const std::size_t index = periods.size() - 1;
    auto [loss_ec] = co_await e.async_wait_for_loss(lease, asio::as_tuple(asio::use_awaitable));
    periods[index].end = std::chrono::steady_clock::now();
    if (loss_ec) co_return;
  }
}

/// No two periods overlap, and terms strictly increase in order of start.
inline void expect_safe(const std::vector<leadership_period>& periods) {
  for (std::size_t i = 0; i < periods.size(); ++i) {
    for (std::size_t j = i + 1; j < periods.size(); ++j) {
      const auto& a = periods[i];
      const auto& b = periods[j];
      ASSERT_TRUE(a.end.has_value())
          << "node " << a.node << " term " << a.term << " still leading when node " << b.node
          << " started term " << b.term;
      EXPECT_LE(*a.end, b.start) << "overlap: node " << a.node << " term " << a.term << " and node "
                                 << b.node << " term " << b.term;
      EXPECT_LT(a.term, b.term) << "terms must strictly increase";
    }
  }
}

}  // namespace s3lect::test
