// RFC 3339 timestamps of the lock record: the text we write and the spellings we accept.
#include "rfc3339.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace s3lect::detail {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

TEST(Rfc3339, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(format_rfc3339_ms(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339_ms(sys_days{year{2026} / November / 21} + 10h + 30min + 45s + 123ms),
            "2026-11-21T10:30:45.123Z");
  // The clock's smallest step (1 ns in libstdc++, 1 us in libc++).
  EXPECT_EQ(format_rfc3339_ms(sys_days{year{2024} / February / 29} + system_clock::duration{1}),
            "2024-02-29T00:00:00.001Z")
      << "rounded up, never earlier than the instant";
}

TEST(Rfc3339, ParsesGoSpellings) {
  const auto parsed = parse_rfc3339("2024-10-27T10:30:45Z");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->unix_seconds, 1730025045);
  EXPECT_EQ(parsed->nanoseconds, 0u);
  EXPECT_EQ(parse_rfc3339("2024-10-27T10:30:45.1Z")->nanoseconds, 100'000'000u);
  EXPECT_EQ(parse_rfc3339("2024-10-27T10:30:45.000000001Z")->nanoseconds, 1u);
  EXPECT_EQ(parse_rfc3339("2024-10-27T10:30:45.1234567899Z")->nanoseconds, 123'456'789u)
      << "digits beyond nanoseconds are dropped";
  EXPECT_EQ(parse_rfc3339("2024-10-27T11:30:45+01:00")->unix_seconds, 1730025045);
  EXPECT_EQ(parse_rfc3339("2024-10-27T00:00:45-10:30")->unix_seconds, 1730025045);
}

TEST(Rfc3339, RecognisesGoZeroTime) {
  EXPECT_TRUE(parse_rfc3339("0001-01-01T00:00:00Z")->is_go_zero_time());
  EXPECT_TRUE(parse_rfc3339("0001-01-01T00:00:00.000Z")->is_go_zero_time());
  EXPECT_TRUE(parse_rfc3339("0000-12-31T23:00:00-01:00")->is_go_zero_time());
  EXPECT_FALSE(parse_rfc3339("0001-01-01T00:00:00.001Z")->is_go_zero_time());
  EXPECT_FALSE(parse_rfc3339("1970-01-01T00:00:00Z")->is_go_zero_time());
}

TEST(Rfc3339, ExtremesDoNotOverflow) {
  EXPECT_EQ(parse_rfc3339("9999-12-31T23:59:59Z")->unix_seconds, 253402300799);
  EXPECT_EQ(parse_rfc3339("0000-01-01T00:00:00Z")->unix_seconds, -62167219200);
}

TEST(Rfc3339, RefusesOtherSpellings) {
  for (const char* text :
       {"", "2024", "2024-10-27", "2024-10-27T10:30Z", "2024-10-27T10:30:45",
        "2024-10-27T10:30:45.Z", "2024-10-27T10:30:45,5Z", "2024-10-27X10:30:45Z",
        "2024-10-27T10:30:45+01", "2024-10-27T10:30:45 Z", " 2024-10-27T10:30:45Z",
        "2024-02-30T00:00:00Z", "2024-10-27T10:30:45Z\n"}) {
    EXPECT_FALSE(parse_rfc3339(text)) << text;
  }
}

}  // namespace
}  // namespace s3lect::detail
