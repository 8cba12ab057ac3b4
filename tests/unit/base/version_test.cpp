// <s3lect/version.hpp>, generated from CMake's project version: its parts, its string and its
// number name one version, and the number works in #if. (scripts/release.sh checks the header
// against CMakeLists.txt, the CHANGELOG and the packages.)
#include <s3lect/version.hpp>

#include <gtest/gtest.h>

#include <string>

#if !defined(S3LECT_VERSION_NUMBER) || S3LECT_VERSION_NUMBER < 0
#error "S3LECT_VERSION_NUMBER must be usable in #if"
#endif

namespace {

TEST(Version, TheStringAndTheNumberNameTheParts) {
  // The number's encoding (MAJOR * 10000 + MINOR * 100 + PATCH) holds only for two-digit parts.
  static_assert(S3LECT_VERSION_MINOR < 100 && S3LECT_VERSION_PATCH < 100);
  EXPECT_EQ(std::string(S3LECT_VERSION_STRING), std::to_string(S3LECT_VERSION_MAJOR) + "." +
                                                    std::to_string(S3LECT_VERSION_MINOR) + "." +
                                                    std::to_string(S3LECT_VERSION_PATCH));
  EXPECT_EQ(S3LECT_VERSION_NUMBER / 10000, S3LECT_VERSION_MAJOR);
  EXPECT_EQ(S3LECT_VERSION_NUMBER / 100 % 100, S3LECT_VERSION_MINOR);
  EXPECT_EQ(S3LECT_VERSION_NUMBER % 100, S3LECT_VERSION_PATCH);
}

}  // namespace
