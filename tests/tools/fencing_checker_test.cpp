// The fencing checker on hand-made write logs: a clean handover passes, a stale write accepted
// after a higher term's completed write is caught, zombie writes are counted and required.
#include "fencing_checker_core.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace s3lect::chaos {
namespace {

fencing_report check(const std::string& text, int min_zombie_refusals = 0) {
  std::istringstream in(text);
  return check_fencing_log(parse_fencing_log(in), min_zombie_refusals);
}

TEST(FencingChecker, HandoverWithARefusedZombiePasses) {
  const auto report = check(
      "write node1 5 100.000000 100.050000 0\n"
      "write node2 6 101.000000 101.040000 0\n"
      "write node1 5 101.500000 101.530000 10\n"
      "zombie node1 100.900000 103.000000\n",
      1);
  EXPECT_TRUE(report.ok()) << format_fencing_report(report);
  EXPECT_EQ(report.per_term.at(5).accepted, 1);
  EXPECT_EQ(report.per_term.at(5).refused, 1);
  EXPECT_EQ(report.zombie_writes, 1);
  EXPECT_EQ(report.zombie_refused, 1);
}

TEST(FencingChecker, StaleWriteAcceptedAfterAHigherTermCompletedIsAViolation) {
  const auto report = check(
      "write node2 6 101.000000 101.040000 0\n"
      "write node1 5 101.100000 101.130000 0\n");
  ASSERT_EQ(report.violations.size(), 1u) << format_fencing_report(report);
  EXPECT_NE(report.violations[0].find("stale write accepted: node1 term 5"), std::string::npos);
}

// Overlapping writes are not ordered: the term-5 write may have committed first.
TEST(FencingChecker, StaleWriteOverlappingTheHigherOneIsNotAViolation) {
  const auto report = check(
      "write node1 5 101.000000 101.200000 0\n"
      "write node2 6 101.010000 101.040000 0\n");
  EXPECT_TRUE(report.ok()) << format_fencing_report(report);
}

TEST(FencingChecker, TooFewZombieRefusalsAndGarbageFail) {
  EXPECT_FALSE(check("write node1 5 1.0 1.1 0\n", 1).ok());
  EXPECT_FALSE(check("write node1 five 1.0 1.1 0\n").ok());
  const auto report = check("write node1 5 1.0 1.1 1\n# comment\n\n");
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.per_term.at(5).failed, 1);
}

// The liveness evidence of fencing mode: writes accepted in enough terms, and the longest stretch
// with none accepted (refused and failed writes do not count; overlapping ones cover each other).
TEST(FencingChecker, TooFewTermsWithAcceptedWritesFail) {
  const std::string one_term =
      "write node1 5 1.000000 1.100000 0\n"
      "write node2 6 1.200000 1.300000 10\n"
      "write node1 5 4.000000 4.100000 0\n";
  std::istringstream in(one_term);
  const auto report = check_fencing_log(parse_fencing_log(in), 0, 2);
  ASSERT_EQ(report.violations.size(), 1u) << format_fencing_report(report);
  EXPECT_NE(report.violations[0].find("accepted writes in only 1 terms"), std::string::npos);
  EXPECT_EQ(report.longest_unwritten_us, 2'900'000);

  std::istringstream two(
      "write node1 5 1.0 1.5 0\nwrite node2 6 1.2 1.3 0\nwrite node2 6 2.0 2.1 0\n");
  const auto moved = check_fencing_log(parse_fencing_log(two), 0, 2);
  EXPECT_TRUE(moved.ok()) << format_fencing_report(moved);
  EXPECT_EQ(moved.accepted_terms, 2);
  EXPECT_EQ(moved.longest_unwritten_us, 500'000);
}

}  // namespace
}  // namespace s3lect::chaos
