// `s3lect status`: prints the lock record as one JSON object.
#pragma once

#include "cli/json_text.hpp"

#include <s3lect/record.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs `s3lect status` with the arguments after the subcommand; returns the exit code.
int run_status(const std::vector<std::string>& args);

/// Help text of `s3lect status`.
std::string status_help();

/// What the store's answer tells about time; each part unknown when the store omitted the
/// headers it comes from.
struct store_timing {
  /// The record's age on the store's clock: the answer's Date minus the object's Last-Modified.
  std::optional<std::chrono::milliseconds> store_age;
  /// The store's clock minus this machine's, from the answer's Date and the request's timing,
  /// and the bound of its error.
  std::optional<std::chrono::milliseconds> clock_offset;
  std::optional<std::chrono::milliseconds> clock_offset_bound;
};

/// Adds the coordination fields `record` has to `out`, each only when set: "priority",
/// "candidates" ([{"id","priority"}]), "successor", "handoverMs", "keepOut".
void coordination_json(json_object& out, const lock_record& record);

/// The JSON object `s3lect status` prints for `record` with ETag `etag`, read at `now`.
std::string status_json(const std::string& lock_url, const std::string& etag,
                        const lock_record& record, std::chrono::system_clock::time_point now,
                        const store_timing& store = {});

/// The JSON object printed for a record that could not be parsed: the error, how many bytes
/// were read (`truncated`: the object holds more) and a short escaped preview of them.
std::string malformed_status_json(const std::string& lock_url, const std::string& etag,
                                  const std::string& error, const std::string& body,
                                  bool truncated = false);

}  // namespace s3lect::cli
