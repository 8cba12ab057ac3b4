// `s3lect release`: an operator's forced handover. Marks the lock record released, keeping its
// term and holder, so that any follower may take over at once.
#pragma once

#include <s3lect/record.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect release` with the arguments after the subcommand; returns the exit code.
int run_release(const std::vector<std::string>& args);

/// Help text of `s3lect release`.
std::string release_help();

/// The record `release` writes over `current`: same holder, address, term and lease,
/// released, with a fresh nonce and lastUpdated = `now`.
lock_record released_record(const lock_record& current, std::chrono::system_clock::time_point now);

}  // namespace s3lect::cli
