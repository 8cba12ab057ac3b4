// `s3lect check`: probes whether a store honours the conditional writes s3lect relies on.
#pragma once

#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect check` with the arguments after the subcommand; returns the exit code.
int run_check(const std::vector<std::string>& args);

/// Help text of `s3lect check`.
const char* check_help();

}  // namespace s3lect::cli
