// What `s3lect run` makes of the guardian's probe, and of --isolation.
#include "supervision/job_isolation.hpp"

#include <gtest/gtest.h>

namespace {

using s3lect::cli::choose_isolation;
using s3lect::cli::parse_isolation_probe;
using s3lect::guardian::isolation;

TEST(JobIsolation, ReadsTheProbe) {
  const auto probe = parse_isolation_probe(
      "pid-namespace ok\ncgroup unavailable cgroup: Permission denied\n"
      "stale 2 /sys/fs/cgroup/x/s3lect-job-9\n");
  EXPECT_EQ(probe.available, (isolation{true, false}));
  EXPECT_EQ(probe.cgroup_problem, "cgroup: Permission denied");
  ASSERT_EQ(probe.stale.size(), 1u);
  EXPECT_EQ(probe.stale[0].first, 2u);
  EXPECT_EQ(probe.stale[0].second, "/sys/fs/cgroup/x/s3lect-job-9");
  // A probe that says nothing allows nothing.
  EXPECT_EQ(parse_isolation_probe("").available, isolation{});
}

TEST(JobIsolation, AutoTakesWhatIsThereAndARequirementMustBeMet) {
  const auto probe = parse_isolation_probe(
      "pid-namespace unavailable user-namespace: Operation not permitted\ncgroup ok\n");
  std::string error;
  EXPECT_EQ(choose_isolation(probe, std::nullopt, error), (isolation{false, true}));
  EXPECT_EQ(choose_isolation(probe, isolation{false, true}, error), (isolation{false, true}));
  EXPECT_EQ(choose_isolation(probe, isolation{}, error), isolation{}) << "guardian alone";
  EXPECT_FALSE(choose_isolation(probe, isolation{true, true}, error));
  EXPECT_NE(error.find("a PID namespace is required but unavailable here (user-namespace: "
                       "Operation not permitted)"),
            std::string::npos)
      << error;
}

}  // namespace
