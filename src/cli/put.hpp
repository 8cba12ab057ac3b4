// `s3lect put`: a fenced write of one object with the leader's term, so that a command started
// by `s3lect run` cannot overwrite its successor's work after losing leadership.
#pragma once

#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect put` with the arguments after the subcommand; returns the exit code.
int run_put(const std::vector<std::string>& args);

/// Help text of `s3lect put`.
std::string put_help();

}  // namespace s3lect::cli
