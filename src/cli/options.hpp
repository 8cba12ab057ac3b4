// Command-line parsing shared by the s3lect subcommands: `--name value` / `--name=value`
// options, durations such as 500ms, 15s and 1m, and s3://BUCKET/KEY locations.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::cli {

/// A bucket and key given as s3://BUCKET/KEY, or a container and blob as az://CONTAINER/BLOB.
struct s3_location {
  std::string bucket;  ///< The bucket, or the container with `azure`.
  std::string key;     ///< The key, or the blob's name with `azure`.
  bool azure = false;  ///< az://: Azure Blob Storage.
};

/// Parses s3://BUCKET/KEY; the key keeps every character after the bucket's slash.
/// Returns nullopt and sets `error` when malformed.
std::optional<s3_location> parse_s3_location(std::string_view text, std::string& error);

/// Parses s3://BUCKET/KEY or az://CONTAINER/BLOB, as parse_s3_location.
std::optional<s3_location> parse_store_location(std::string_view text, std::string& error);

/// Parses a duration such as 500ms, 15s, 1m, 1m30s, 2h or 0. Returns nullopt when malformed or
/// longer than a year.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// "0", "10h", "2m", "15s" or "1333ms": the largest unit that gives the duration exactly, as
/// parse_duration reads it back.
std::string format_duration(std::chrono::milliseconds value);

/// Parses the value of the duration option `option` ("--lease"), at most `max`. Returns nullopt
/// and sets `error`, naming the option: "expected a duration such as …" when malformed, "must
/// be at most 24h" when too long, whatever the size.
std::optional<std::chrono::milliseconds> parse_duration_at_most(std::string_view option,
                                                                std::string_view text,
                                                                std::chrono::milliseconds max,
                                                                std::string& error);

/// The largest term the tool writes or compares: 2^53 - 1, the largest whole number every JSON
/// reader (JavaScript, double-based) keeps exact.
inline constexpr std::uint64_t max_term = (std::uint64_t{1} << 53) - 1;

/// Parses a leadership term, 1 to max_term, given by `origin` ("--term", "$S3LECT_TERM").
/// Returns nullopt and sets `error`, naming `origin` and the range, otherwise.
std::optional<std::uint64_t> parse_term(std::string_view origin, std::string_view text,
                                        std::string& error);

/// Options and positional arguments of one subcommand.
class parsed_args {
 public:
  /// Parses `args` against the allowed option names: `flags` take no value, `valued` take one.
  /// Everything after `--` is kept as the trailing command. Returns nullopt and sets `error` on
  /// an unknown option, a missing value or a repeated option.
  static std::optional<parsed_args> parse(const std::vector<std::string>& args,
                                          const std::vector<std::string>& flags,
                                          const std::vector<std::string>& valued,
                                          std::string& error);

  /// True when the flag or valued option was given.
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// The value of an option, or nullopt.
  std::optional<std::string> get(const std::string& name) const;
  /// Positional arguments before `--`.
  const std::vector<std::string>& positional() const { return positional_; }
  /// Arguments after `--`.
  const std::vector<std::string>& trailing() const { return trailing_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::vector<std::string> trailing_;
};

}  // namespace s3lect::cli
