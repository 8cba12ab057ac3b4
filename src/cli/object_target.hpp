// The arguments `put` and `get` share: one s3://BUCKET/KEY or az://CONTAINER/BLOB as a positional
// argument (the object, not the lock) plus the store options of every command.
#pragma once

#include "cli/options.hpp"
#include "cli/store_options.hpp"

#include <s3lect/storage.hpp>

#include <boost/system/error_code.hpp>

#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// Parsed arguments of an object command and the object they name.
struct object_command {
  parsed_args args;
  store_target target;  ///< target.key is the object's key.
};

/// Parses `args`: the store options except --lock, `extra_flags`, `extra_valued`, --help and
/// exactly one s3://BUCKET/KEY. Returns nullopt and sets `error` on a problem; with --help,
/// `help` is set and nothing else is checked.
std::optional<object_command> parse_object_command(const std::vector<std::string>& args,
                                                   const std::vector<std::string>& extra_flags,
                                                   const std::vector<std::string>& extra_valued,
                                                   bool& help, std::string& error);

/// The help lines of the store options for an object command (no --lock).
std::string object_store_options_help();

/// One line describing a failed `put` or `get`: "malformed fenced object: …" for an object
/// that is not a fenced write's, else the store's failure as describe_store_error says it.
std::string describe_object_error(const boost::system::error_code& error,
                                  const response_info& info);

}  // namespace s3lect::cli
