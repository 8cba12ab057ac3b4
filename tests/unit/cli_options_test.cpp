// Option parsing of the s3lect tool: durations, s3:// locations, flags and values.
#include "cli/options.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using s3lect::cli::parse_duration;
using s3lect::cli::parse_s3_location;
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
  auto args = parsed_args::parse({"--lock", "s3://b/k", "--path-style", "--region=eu-west-1", "x",
                                  "--", "cmd", "--lock"},
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
