// `s3lect release`: an operator's forced handover. Marks the lock record released, keeping its
// term and holder, so that any follower may take over at once.
#pragma once

#include <s3lect/record.hpp>
#include <s3lect/retry.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect release` with the arguments after the subcommand; returns the exit code.
int run_release(const std::vector<std::string>& args);

/// Help text of `s3lect release`.
std::string release_help();

/// The record `release` writes over `current`: same holder, address, term and lease,
/// released, with a fresh nonce and lastUpdated = `now`.
lock_record released_record(const lock_record& current, std::chrono::system_clock::time_point now);

/// Writes `next` over the object read with ETag `read_etag` (If-Match), retrying only failures
/// that certainly did not reach the store. An ambiguous answer is resolved by re-reading: the
/// record tells, by its nonce, whether the write happened. errc::precondition_failed: the object
/// is no longer the one read, and nothing was written.
boost::asio::awaitable<std::tuple<boost::system::error_code, put_result>> write_released(
    s3_client& client, std::string key, std::string read_etag, lock_record next,
    retry_policy policy);

}  // namespace s3lect::cli
