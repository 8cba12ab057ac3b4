// The options that configure an elector (--id, --addr, --lease, --renew-deadline, …, the peer
// options) and its logging (--log-level, --log-format), turned into an elector_config validated as
// the library validates it, with the library's message naming the option to change.
#pragma once

#include "cli/log_output.hpp"
#include "cli/options.hpp"
#include "cli/serve_options.hpp"
#include "cli/store_options.hpp"

#include <s3lect/config.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::cli {

/// Flag names of the elector options (no value).
const std::vector<std::string>& elector_flag_names();
/// Valued option names of the elector options (--request-timeout is a store option).
const std::vector<std::string>& elector_valued_names();
/// Help text of the elector and logging options, --request-timeout included.
const char* elector_options_help();

/// The elector's configuration (without its logger) and how to log.
struct elector_settings {
  elector_config config;
  log_level level = log_level::info;
  log_format format = log_format::text;
  /// The peer health server and the metrics endpoint to run.
  serve_settings serve;
  /// The timing options not given that follow those given ("renew-deadline", …).
  std::vector<std::string> derived;
};

/// Builds and validates the elector settings for the lock `target.key`, the peer options
/// (make_serve_settings) included. The client of `target` serves the elector: its request
/// timeout becomes the elector's (elector_config::match_request_timeout). Returns nullopt and sets
/// `error` to one line naming the option at fault.
std::optional<elector_settings> make_elector_settings(const parsed_args& args, store_target& target,
                                                      std::string& error);

/// "HOST:PID", the default server id.
std::string default_server_id();

/// The command-line option that sets elector_config field `field` ("renew_deadline" →
/// "--renew-deadline"); empty when none does.
std::string option_for_field(std::string_view field);

}  // namespace s3lect::cli
