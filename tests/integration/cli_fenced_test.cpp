// `s3lect put` and `s3lect get` against the local RGW: the term from --term or $S3LECT_TERM,
// exit 10 for a fenced-out write, the term on stderr or in --term-file, and one-line errors.
#include "support/cli_harness.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace s3lect::test {
namespace {

class CliFencedIntegration : public CliIntegration {
 protected:
  std::string object() const { return "s3://" + s3.bucket + "/" + key + ".data"; }

  std::vector<std::string> object_args(std::vector<std::string> args) const {
    for (const char* arg : {"--endpoint", s3.http_endpoint.c_str(), "--path-style"}) {
      args.push_back(arg);
    }
    args.push_back(object());
    return args;
  }

  std::string body_file(const std::string& name, const std::string& body) const {
    const std::string path = scratch + "/" + name;
    std::ofstream(path) << body;
    return path;
  }
};

TEST_F(CliFencedIntegration, PutWritesGetReadsBackBodyAndTerm) {
  const auto& written =
      run(object_args({"put", "--term", "5", "--file", body_file("a", "line one\n")}));
  ASSERT_EQ(written.status, std::optional<int>(0)) << written.err();
  const auto& got = run(object_args({"get"}));
  ASSERT_EQ(got.status, std::optional<int>(0)) << got.err();
  EXPECT_EQ(got.out(), "line one\n");
  EXPECT_EQ(got.err(), "term 5\n");
  const std::string term_file = scratch + "/term";
  ASSERT_EQ(run(object_args({"get", "--term-file", term_file})).status, std::optional<int>(0));
  EXPECT_EQ(read_file(term_file), "5\n");
}

TEST_F(CliFencedIntegration, LowerTermExitsTenAndLeavesTheHigherTermsBody) {
  ASSERT_EQ(run(object_args({"put", "--term", "6", "--file", body_file("six", "six")})).status,
            std::optional<int>(0));
  expect_one_line_error(run(object_args({"put", "--term", "5", "--file", body_file("f", "five")})),
                        10, "fenced out");
  EXPECT_EQ(run(object_args({"get"})).out(), "six");
}

TEST_F(CliFencedIntegration, TermDefaultsToTheEnvironmentOfRun) {
  ::setenv("S3LECT_TERM", "7", 1);
  const auto& written = run(object_args({"put", "--file", body_file("b", "from run")}));
  ::unsetenv("S3LECT_TERM");
  ASSERT_EQ(written.status, std::optional<int>(0)) << written.err();
  EXPECT_EQ(run(object_args({"get"})).err(), "term 7\n");
}

TEST_F(CliFencedIntegration, BadArgumentsAndMissingObjectsGiveOneLine) {
  ::unsetenv("S3LECT_TERM");
  expect_one_line_error(run(object_args({"put", "--file", body_file("c", "x")})), 2, "no term");
  expect_one_line_error(run(object_args({"put", "--term", "-1"})), 2, "--term: expected");
  expect_one_line_error(run({"put", "--term", "1"}), 2, "missing the object");
  expect_one_line_error(run(object_args({"put", "--term", "1", "--file", scratch + "/none"})), 2,
                        "--file: cannot open");
  expect_one_line_error(run(object_args({"get"})), 3, "no object");
  expect_one_line_error(
      run({"put", "--term", "1", "--endpoint", "http://127.0.0.1:1", "--path-style",
           "--request-timeout", "200ms", "--file", body_file("d", "x"), object()}),
      4, "cannot write");
}

}  // namespace
}  // namespace s3lect::test
