// `s3lect run`: campaigns for the lock and runs a command only while leader.
#pragma once

#include "cli/run_options.hpp"

#include <s3lect/config.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect run` with the arguments after the subcommand; returns the exit code.
int run_run(const std::vector<std::string>& args);

/// Help text of `s3lect run`.
std::string run_help();

/// Parses and validates the options of `s3lect run` (not the command's existence). Returns
/// nullopt and sets `error` to one line naming the option at fault.
std::optional<run_options> parse_run_options(const std::vector<std::string>& args,
                                             std::string& error);

/// Checks that a command stopped at the renew deadline is gone, kill grace included, before
/// any other node may take over: kill_grace < lease - renew_deadline. nullopt when it is.
std::optional<std::string> check_kill_grace(std::chrono::milliseconds kill_grace,
                                            const elector_config& config);

}  // namespace s3lect::cli
