// The one exit-code table (`check --help` and the top-level help:
// tests/integration/cli_usage_test.cpp): the codes store failures map to, and the copy in the docs.
#include "cli/exit_codes.hpp"
#include "cli/get.hpp"
#include "cli/put.hpp"
#include "cli/release.hpp"
#include "cli/run.hpp"
#include "cli/status.hpp"

#include <s3lect/error.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace s3lect::cli {
namespace {

TEST(ExitCodes, StoreFailuresOfEveryKindAreFourNeverAnInternalFailure) {
  for (const errc failure :
       {errc::connect_failed, errc::signature_mismatch, errc::access_denied, errc::timeout,
        errc::no_such_bucket, errc::protocol_error, errc::tls_verification_failed}) {
    EXPECT_EQ(exit_code_for_store_error(make_error_code(failure)), exit_store_error)
        << make_error_code(failure).message();
  }
  EXPECT_EQ(exit_code_for_store_error(make_error_code(errc::malformed_record)),
            exit_malformed_record);
  EXPECT_EQ(exit_code_for_store_error(make_error_code(errc::fenced_out)), exit_fenced_out);
  EXPECT_EQ(exit_code_for_store_error(make_error_code(errc::invalid_config)), exit_usage);
}

TEST(ExitCodes, EveryCommandsHelpEndsWithTheOneTable) {
  const std::string table = exit_code_table();
  for (const std::string& help :
       {get_help(), put_help(), status_help(), release_help(), run_help()}) {
    ASSERT_GE(help.size(), table.size());
    EXPECT_EQ(help.substr(help.size() - table.size()), table) << help;
  }
}

TEST(ExitCodes, GettingStartedQuotesTheTableVerbatim) {
  std::ifstream file(S3LECT_DOCS_DIR "/getting-started.md");
  ASSERT_TRUE(file.is_open());
  std::ostringstream page;
  page << file.rdbuf();
  EXPECT_NE(page.str().find("```text\n" + exit_code_table() + "```\n"), std::string::npos)
      << "docs/getting-started.md must quote exit_code_table() as printed by s3lect --help";
}

}  // namespace
}  // namespace s3lect::cli
