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
#include <sstream>
#include <string>
#include <vector>

namespace s3lect::test {

/// One leadership period as the elector's users saw it.
struct leadership_period {
  int node = 0;
  std::uint64_t term = 0;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> end;
};

/// Where a lease that has just been delivered starts, as a careful leader-only worker sees it:
/// the time is taken first, then the elector is asked whether it still leads. A lease whose
/// delivery was overtaken by its loss (a stop or demotion between the completion being queued
/// and the worker running) is stale: nullopt, and the worker must not act on it. Taking the
/// time before the check keeps the recorded start no later than the moment leadership was
/// confirmed, so a bug that reports leadership while another elector leads is still recorded.
inline std::optional<std::chrono::steady_clock::time_point> confirmed_start(const elector& e) {
  const auto start = std::chrono::steady_clock::now();
  if (!e.is_leader()) return std::nullopt;
  return start;
}

/// Appends every leadership period of `e` to `periods` until the elector stops.
inline boost::asio::awaitable<void> record_periods(elector& e, int node,
                                                   std::vector<leadership_period>& periods) {
  namespace asio = boost::asio;
  for (;;) {
    auto [ec, lease] = co_await e.async_wait_for_leadership(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    const auto start = confirmed_start(e);
    if (!start) continue;
    periods.push_back({node, lease.term, *start, std::nullopt});
    const std::size_t index = periods.size() - 1;
    auto [loss_ec] = co_await e.async_wait_for_loss(lease, asio::as_tuple(asio::use_awaitable));
    periods[index].end = std::chrono::steady_clock::now();
    if (loss_ec) co_return;
  }
}

/// The periods in order, in milliseconds from the first start, for failure messages.
inline std::string describe(const std::vector<leadership_period>& periods) {
  std::ostringstream out;
  if (periods.empty()) return "no leadership periods";
  const auto origin = periods.front().start;
  const auto ms = [origin](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - origin).count();
  };
  out << "leadership periods (ms from the first start):";
  for (const auto& p : periods) {
    out << "\n  node " << p.node << " term " << p.term << ": " << ms(p.start) << " .. ";
    if (p.end) {
      out << ms(*p.end);
    } else {
      out << "(open)";
    }
  }
  return out.str();
}

/// No two periods overlap, and terms strictly increase in order of start.
inline void expect_safe(const std::vector<leadership_period>& periods) {
  for (std::size_t i = 0; i < periods.size(); ++i) {
    for (std::size_t j = i + 1; j < periods.size(); ++j) {
      const auto& a = periods[i];
      const auto& b = periods[j];
      ASSERT_TRUE(a.end.has_value())
          << "node " << a.node << " term " << a.term << " still leading when node " << b.node
          << " started term " << b.term << "\n"
          << describe(periods);
      EXPECT_LE(*a.end, b.start) << "overlap: node " << a.node << " term " << a.term << " and node "
                                 << b.node << " term " << b.term << "\n"
                                 << describe(periods);
      EXPECT_LT(a.term, b.term) << "terms must strictly increase\n" << describe(periods);
    }
  }
}

}  // namespace s3lect::test
