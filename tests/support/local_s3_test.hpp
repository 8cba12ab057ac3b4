// The fixture of the integration tests that run against the local RGW: SetUp reads its variables
// into `s3`, and a missing variable fails the test (support/local_s3.hpp says why not a skip).
#pragma once

#include "support/local_s3.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace s3lect::test {

class local_s3_test : public ::testing::Test {
 protected:
  void SetUp() override { use_store(local_store::rgw); }

  /// Reads the variables of `store` into `s3` instead.
  void use_store(local_store store) {
    std::string problem;
    auto found = local_s3::from_environment(store, problem);
    ASSERT_TRUE(found) << problem;
    s3 = std::move(*found);
  }

  local_s3 s3;
};

}  // namespace s3lect::test
