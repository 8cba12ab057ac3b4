// term_guard: stale terms refused, equal terms admitted, the header parsed strictly, and the
// guarantees kept under several threads (run under TSan in CI's TSan job).
#include <s3lect/term_guard.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using s3lect::term_guard;

TEST(TermGuard, RefusesLowerTermsAdmitsEqualAndHigher) {
  term_guard guard;
  EXPECT_TRUE(guard.admit(5));
  EXPECT_TRUE(guard.admit(5));
  EXPECT_TRUE(guard.admit(6));
  EXPECT_FALSE(guard.admit(5));
  EXPECT_TRUE(guard.is_stale(5));
  EXPECT_FALSE(guard.is_stale(6));
  EXPECT_EQ(guard.highest_seen(), 6u);
}

TEST(TermGuard, StartsFromARestoredHighestTerm) {
  term_guard guard(9);
  EXPECT_FALSE(guard.admit(8));
  EXPECT_TRUE(guard.admit(9));
}

TEST(TermGuard, HeaderIsDecimalOnly) {
  EXPECT_EQ(s3lect::term_header, "S3lect-Term");
  EXPECT_EQ(s3lect::parse_term_header("42"), 42u);
  EXPECT_EQ(s3lect::parse_term_header(" 7\t"), 7u);
  for (const char* bad : {"", " ", "-1", "+1", "0x10", "4 2", "42a", "18446744073709551616"}) {
    EXPECT_FALSE(s3lect::parse_term_header(bad)) << bad;
  }
}

// Threads admit interleaved terms; the highest seen ends as the maximum, and no admission of a
// term below a term already admitted before it started is ever reported.
TEST(TermGuard, ConcurrentAdmissionsNeverAdmitAStaleTerm) {
  term_guard guard;
  constexpr int threads = 6;
  constexpr std::uint64_t per_thread = 20000;
  std::atomic<int> stale_admitted{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < per_thread; ++i) {
        const std::uint64_t term = i * threads + static_cast<std::uint64_t>(t);
        const std::uint64_t seen_before = guard.highest_seen();
        if (guard.admit(term) && term < seen_before) ++stale_admitted;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(stale_admitted, 0);
  EXPECT_EQ(guard.highest_seen(), (per_thread - 1) * threads + threads - 1);
}

// The work of apply_if_current lands in term order: a term never runs after a higher one.
TEST(TermGuard, ApplyIfCurrentOrdersTheWorkByTerm) {
  term_guard guard;
  std::vector<std::uint64_t> applied;  // Only touched inside apply_if_current's lock.
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      for (std::uint64_t term = static_cast<std::uint64_t>(t); term < 4000; term += 4) {
        guard.apply_if_current(term, [&] { applied.push_back(term); });
      }
    });
  }
  for (auto& worker : workers) worker.join();
  ASSERT_FALSE(applied.empty());
  EXPECT_TRUE(std::is_sorted(applied.begin(), applied.end()));
  EXPECT_EQ(applied.back(), guard.highest_seen());
}

}  // namespace
