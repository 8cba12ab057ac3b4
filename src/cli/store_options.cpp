#include "cli/store_options.hpp"

namespace s3lect::cli {

const std::vector<std::string>& store_flag_names() {
  static const std::vector<std::string> names{"path-style"};
  return names;
}

const std::vector<std::string>& store_valued_names() {
  static const std::vector<std::string> names{"lock", "endpoint", "region", "ca-file",
                                              "request-timeout"};
  return names;
}

const char* store_location_help() {
  return "  --lock s3://BUCKET/KEY   the lock object (required)\n"
         "  --endpoint URL           S3 endpoint, http:// or https:// (default: "
         "$AWS_ENDPOINT_URL_S3,\n"
         "                           $AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com)\n"
         "  --region R               signing region (default: $AWS_REGION, $AWS_DEFAULT_REGION,\n"
         "                           the profile's region; required for AWS, else us-east-1)\n"
         "  --ca-file PATH           PEM file of CAs trusted for HTTPS (default: system roots)\n"
         "  --path-style             address the bucket in the path, not the host name\n"
         "                           (default: in the host name, virtual-hosted style)\n"
         "  Credentials: the AWS chain (environment, web identity, profile files, container,\n"
         "  instance metadata).\n";
}

const char* store_options_help() {
  static const std::string text = [] {
    // Before the closing note on credentials, if there is one.
    std::string help = store_location_help();
    const auto note = help.find("  Credentials");
    help.insert(note == std::string::npos ? help.size() : note,
                "  --request-timeout DUR    bound on one request attempt (default 5s)\n");
    return help;
  }();
  return text.c_str();
}

store_command_names store_command_option_names(const std::vector<std::string>& extra_flags,
                                               const std::vector<std::string>& extra_valued) {
  store_command_names names{store_flag_names(), store_valued_names()};
  names.flags.push_back("help");
  names.flags.insert(names.flags.end(), extra_flags.begin(), extra_flags.end());
  names.valued.insert(names.valued.end(), extra_valued.begin(), extra_valued.end());
  return names;
}

std::optional<parsed_args> parse_store_command(const std::vector<std::string>& args,
                                               const std::vector<std::string>& extra_valued,
                                               std::string& error,
                                               const std::vector<std::string>& extra_flags) {
  const store_command_names names = store_command_option_names(extra_flags, extra_valued);
  auto parsed = parsed_args::parse(args, names.flags, names.valued, error);
  if (!parsed || parsed->has("help")) return parsed;
  if (!parsed->positional().empty()) {
    error = "unexpected argument '" + parsed->positional()[0] + "'";
    return std::nullopt;
  }
  if (!parsed->trailing().empty()) {
    error = "unexpected arguments after --";
    return std::nullopt;
  }
  return parsed;
}

std::optional<store_target> make_store_target(const parsed_args& args, std::string& error) {
  const auto lock = args.get("lock");
  if (!lock) {
    error = "missing --lock s3://BUCKET/KEY";
    return std::nullopt;
  }
  auto location = parse_s3_location(*lock, error);
  if (!location) return std::nullopt;

  store_target target;
  target.key = location->key;
  target.config.bucket = location->bucket;
  if (auto endpoint = args.get("endpoint")) target.config.endpoint = *endpoint;
  if (auto region = args.get("region")) target.config.region = *region;
  if (auto ca_file = args.get("ca-file")) target.config.tls.ca_file = *ca_file;
  if (args.has("path-style")) target.config.addressing = addressing_style::path;
  if (auto timeout = args.get("request-timeout")) {
    auto parsed = parse_duration(*timeout);
    if (!parsed || parsed->count() == 0) {
      error = "--request-timeout: expected a positive duration such as 500ms or 5s";
      return std::nullopt;
    }
    target.config.request_timeout = *parsed;
  }
  target.config.apply_environment();
  if (auto problem = target.config.validate()) {
    error = *problem;
    return std::nullopt;
  }
  return target;
}

}  // namespace s3lect::cli
