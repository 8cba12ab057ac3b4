// Option parsing of the s3lect tool: durations, s3:// locations, flags and values.
#include "cli/options.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using s3lect::cli::format_duration;
using s3lect::cli::parse_duration;
using s3lect::cli::parse_duration_at_most;
using s3lect::cli::parse_s3_location;
using s3lect::cli::parse_term;
using s3lect::cli::parsed_args;

TEST(ParseDuration, AcceptsUnitsAndCombinations) {
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("15s"), 15s);
  EXPECT_EQ(parse_duration("1m"), 60s);
  EXPECT_EQ(parse_duration("1m30s"), 90s);
  EXPECT_EQ(parse_duration("2h"), 7200s);
  EXPECT_EQ(parse_duration("0"), 0ms);
}

TEST(ParseDuration, RejectsMalformedAndAbsurdValues) {
  for (const char* bad : {"", "15", "s", "-1s", "1.5s", "10x", "1s ", "99999999999h", "ms"}) {
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
  }
}

TEST(ParseDuration, TooLongIsOneRangeMessageAndMalformedAnother) {
  std::string error;
  EXPECT_EQ(parse_duration_at_most("--lease", "24h", 24h, error), 24h) << error;
  for (const char* too_long : {"25h", "1000000h", "99999999999999999999999h", "1h1000000h"}) {
    EXPECT_FALSE(parse_duration_at_most("--lease", too_long, 24h, error)) << too_long;
    EXPECT_EQ(error, "--lease: must be at most 24h, got '" + std::string(too_long) + "'");
  }
  EXPECT_FALSE(parse_duration_at_most("--lease", "15", 24h, error));
  EXPECT_EQ(error, "--lease: expected a duration such as 500ms, 15s or 1m, got '15'");
}

TEST(FormatDuration, PrintsTheLargestExactUnitAsWritten) {
  EXPECT_EQ(format_duration(10h), "10h");
  EXPECT_EQ(format_duration(90min), "90m");
  EXPECT_EQ(format_duration(15s), "15s");
  EXPECT_EQ(format_duration(1333ms), "1333ms");
  EXPECT_EQ(format_duration(0ms), "0");
}

TEST(ParseTerm, AcceptsTheJsonSafeRangeAndSaysSoOutsideIt) {
  std::string error;
  EXPECT_EQ(parse_term("--term", "1", error), 1u);
  EXPECT_EQ(parse_term("--term", "9007199254740991", error), 9007199254740991u);
  for (const char* out_of_range :
       {"0", "9007199254740992", "18446744073709551615", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_term("--term", out_of_range, error)) << out_of_range;
    EXPECT_EQ(error, "--term: a term is from 1 to 2^53-1 (9007199254740991), got " +
                         std::string(out_of_range));
  }
  for (const char* not_a_number : {"", "-1", "1.5", "x", "1 "}) {
    EXPECT_FALSE(parse_term("$S3LECT_TERM", not_a_number, error)) << not_a_number;
    EXPECT_EQ(error, "$S3LECT_TERM: expected a term, a whole number, got '" +
                         std::string(not_a_number) + "'");
  }
}

TEST(ParseS3Location, SplitsBucketAndKeyKeepingEveryKeyCharacter) {
  std::string error;
  auto location = parse_s3_location("s3://my-bucket/leader/a b+c=d&e~f.json", error);
  ASSERT_TRUE(location) << error;
  EXPECT_EQ(location->bucket, "my-bucket");
  EXPECT_EQ(location->key, "leader/a b+c=d&e~f.json");
}

TEST(ParseS3Location, RejectsMissingPieces) {
  std::string error;
  for (const char* bad : {"my-bucket/key", "s3://", "s3://bucket", "s3://bucket/", "s3:///key"}) {
    error.clear();
    EXPECT_FALSE(parse_s3_location(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(ParsedArgs, ReadsFlagsValuesPositionalsAndTrailingCommand) {
  std::string error;
  auto args = parsed_args::parse(
      {"--lock", "s3://b/k", "--path-style", "--region=eu-west-1", "x", "--", "cmd", "--lock"},
      {"path-style"}, {"lock", "region"}, error);
  ASSERT_TRUE(args) << error;
  EXPECT_EQ(args->get("lock"), "s3://b/k");
  EXPECT_EQ(args->get("region"), "eu-west-1");
  EXPECT_TRUE(args->has("path-style"));
  EXPECT_EQ(args->positional(), std::vector<std::string>{"x"});
  EXPECT_EQ(args->trailing(), (std::vector<std::string>{"cmd", "--lock"}));
}

TEST(ParsedArgs, RejectsUnknownRepeatedAndValuelessOptions) {
  std::string error;
  EXPECT_FALSE(parsed_args::parse({"--nope"}, {}, {"lock"}, error));
  EXPECT_NE(error.find("unknown option --nope"), std::string::npos);
  EXPECT_FALSE(parsed_args::parse({"--lock", "a", "--lock", "b"}, {}, {"lock"}, error));
  EXPECT_NE(error.find("twice"), std::string::npos);
  EXPECT_FALSE(parsed_args::parse({"--lock"}, {}, {"lock"}, error));
  EXPECT_NE(error.find("needs a value"), std::string::npos);
  EXPECT_FALSE(parsed_args::parse({"--path-style=1"}, {"path-style"}, {}, error));
}
