// `s3lect release`: an operator's forced handover. Marks the lock record released, keeping its
// term and holder, with the holder kept out for a while and a successor named, so that another
// node takes over at once.
#pragma once

#include <s3lect/record.hpp>
#include <s3lect/retry.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect release` with the arguments after the subcommand; returns the exit code.
int run_release(const std::vector<std::string>& args);

/// Help text of `s3lect release`.
std::string release_help();

/// A released record over `current`: same holder, address, term, lease and candidates, with a
/// fresh nonce, lastUpdated = `now`, and the names of this release only: `successor` (who should
/// take it first), `keep_out` (who holds off) and, when either is named, handoverMs = `window`
/// (how long the others hold off); the names of an earlier release are not carried over.
lock_record released_record(const lock_record& current, std::chrono::system_clock::time_point now,
                            std::string successor = {}, std::string keep_out = {},
                            std::optional<std::chrono::milliseconds> window = {});

/// The first of `current`'s candidates unless it is the holder; empty when there is none.
std::string listed_successor(const lock_record& current);

/// `s3lect release`'s default --keep-out: 2/3 of the record's leaseMs (15 s for a record
/// without one), 2F in the default proportions: a follower that reads S3 every F, or one that
/// sees the release only a frequent interval late, still finds the holder held off.
std::chrono::milliseconds default_keep_out(const lock_record& current);

/// What `s3lect release` writes: `current` released, its holder kept out for `keep_out`
/// (nullopt: default_keep_out()), naming `to`, else listed_successor().
lock_record forced_release_record(const lock_record& current,
                                  std::chrono::system_clock::time_point now, std::string to,
                                  std::optional<std::chrono::milliseconds> keep_out);

/// What a job's guardian writes for a dead s3lect (`s3lect __guardian-release`): `current`
/// released, naming listed_successor() with a window of the record's lease / 15 (the default
/// handover window, F / 5, in the default proportions) within 100 ms .. 1 s, so that the best
/// watching candidate takes over at once and a dead one costs at most that window. Nobody is
/// kept out: the holder is gone.
lock_record guardian_release_record(const lock_record& current,
                                    std::chrono::system_clock::time_point now);

/// Writes `next` over the object read with ETag `read_etag` (If-Match), retrying only failures
/// that certainly did not reach the store. An ambiguous answer is resolved by re-reading: the
/// record tells, by its nonce, whether the write happened. errc::precondition_failed: the object
/// is no longer the one read, and nothing was written.
boost::asio::awaitable<std::tuple<boost::system::error_code, put_result>> write_released(
    storage& store, std::string key, std::string read_etag, lock_record next, retry_policy policy);

}  // namespace s3lect::cli
