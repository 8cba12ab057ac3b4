// `s3lect get`: reads an object written by `s3lect put`: the body to stdout, the term aside.
#pragma once

#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect get` with the arguments after the subcommand; returns the exit code.
int run_get(const std::vector<std::string>& args);

/// Help text of `s3lect get`.
std::string get_help();

}  // namespace s3lect::cli
