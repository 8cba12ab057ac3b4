// `s3lect check` against the local stores: the sequential probe and the races find both safe,
// each with its own quirks (the RGW: 412 for If-Match on a missing key, 500 for some race losers;
// moto: 404 NoSuchKey, quoted ETags accepted); bad race options exit 2.
#include "support/cli_harness.hpp"

#include <string>
#include <vector>

namespace s3lect {
namespace {

using test::CliIntegration;

std::vector<std::string> check_args(const std::string& bucket, const std::string& endpoint) {
  return {"check",         "--lock", "s3://" + bucket + "/cli-check/" + test::unique_suffix(),
          "--endpoint",    endpoint, "--path-style",
          "--race-rounds", "5"};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliCheck : public CliIntegration {
 protected:
  /// Runs `s3lect check` (5 rounds of races) on `bucket` at `endpoint`: it must say safe, with
  /// one winner in every race, and print each of `quirks`.
  void expect_safe(const std::string& bucket, const std::string& endpoint,
                   const std::vector<std::string>& quirks) {
    auto& check = run(check_args(bucket, endpoint));
    const std::string out = check.out();
    EXPECT_EQ(check.status, 0) << out << check.err();
    for (const auto& quirk : quirks) EXPECT_TRUE(contains(out, quirk)) << quirk << "\n" << out;
    EXPECT_TRUE(contains(out, "race winners per round (create-if-absent/If-Match): 1/1 x5")) << out;
    EXPECT_TRUE(contains(out, "ok    races: 16 writers, 5 rounds")) << out;
    EXPECT_TRUE(contains(out, "result: safe for s3lect")) << out;
  }
};

TEST_F(CliCheck, FindsTheRadosgwSafeIncludingRaces) {
  expect_safe(s3.bucket, s3.http_endpoint,
              {"quoted ETag in If-Match: refused (HTTP 412)",
               "If-Match on a missing key: HTTP 412 (AWS answers 404)"});
}

TEST_F(CliCheck, FindsMotoSafeIncludingRacesWithAwsAnswers) {
  std::string problem;
  const auto moto = test::local_s3::from_environment(test::local_store::moto, problem);
  ASSERT_TRUE(moto) << problem;
  expect_safe(
      moto->bucket, moto->http_endpoint,
      {"quoted ETag in If-Match: accepted", "If-Match on a missing key: HTTP 404 (as AWS)"});
}

TEST_F(CliCheck, RefusesRaceOptionsOutOfRange) {
  for (const char* option : {"--race-writers=1", "--race-writers=257", "--race-writers=x"}) {
    auto args = check_args(s3.bucket, s3.http_endpoint);
    args.push_back(option);
    auto& check = run(args);
    EXPECT_EQ(check.status, 2) << option;
    EXPECT_TRUE(contains(check.err(), "--race-writers wants a whole number from 2 to 256"))
        << option << ": " << check.err();
  }
  auto args = check_args(s3.bucket, s3.http_endpoint);
  args.back() = "-1";  // --race-rounds -1
  auto& check = run(args);
  EXPECT_EQ(check.status, 2);
  EXPECT_TRUE(contains(check.err(), "--race-rounds wants a whole number from 0 to 1000"))
      << check.err();
}

}  // namespace
}  // namespace s3lect
