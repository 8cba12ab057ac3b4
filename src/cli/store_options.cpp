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
  return "  --lock s3://BUCKET/KEY   the lock object (required); az://CONTAINER/BLOB for Azure\n"
         "                           Blob Storage\n"
         "  --endpoint URL           S3 endpoint, http:// or https:// (default: "
         "$AWS_ENDPOINT_URL_S3,\n"
         "                           $AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com);\n"
         "                           az://: the blob service URL (default: the connection\n"
         "                           string's BlobEndpoint, else\n"
         "                           https://ACCOUNT.blob.core.windows.net)\n"
         "  --region R               signing region (default: $AWS_REGION, $AWS_DEFAULT_REGION,\n"
         "                           the profile's region; required for AWS, else us-east-1)\n"
         "  --ca-file PATH           PEM file of CAs trusted for HTTPS (default: system roots)\n"
         "  --path-style             address the bucket in the path, not the host name\n"
         "                           (default: in the host name, virtual-hosted style)\n"
         "  Credentials: the AWS chain (environment, web identity, profile files, container,\n"
         "  instance metadata); az://: $AZURE_STORAGE_CONNECTION_STRING, else\n"
         "  $AZURE_STORAGE_ACCOUNT with $AZURE_STORAGE_KEY or $AZURE_STORAGE_SAS_TOKEN.\n";
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

namespace {

/// The timeout --request-timeout gives, or nullopt with `error` set.
std::optional<std::chrono::milliseconds> request_timeout_of(const std::string& text,
                                                            std::string& error) {
  auto parsed = parse_duration(text);
  if (!parsed || parsed->count() == 0) {
    error = "--request-timeout: expected a positive duration such as 500ms or 5s";
    return std::nullopt;
  }
  return parsed;
}

/// The target of an az:// lock: the Azure SDKs' variables, then the options.
std::optional<store_target> make_azure_target(const parsed_args& args, s3_location location,
                                              std::string& error) {
  for (const char* s3_only : {"region", "path-style"}) {
    if (args.has(s3_only)) {
      error = "--" + std::string(s3_only) + " does not apply to az:// (Azure Blob Storage)";
      return std::nullopt;
    }
  }
  store_target target;
  target.key = std::move(location.key);
  target.azure = azure_blob_config::from_environment(std::move(location.bucket));
  if (auto endpoint = args.get("endpoint")) target.azure->endpoint = *endpoint;
  if (auto ca_file = args.get("ca-file")) target.azure->tls.ca_file = *ca_file;
  if (auto timeout = args.get("request-timeout")) {
    auto parsed = request_timeout_of(*timeout, error);
    if (!parsed) return std::nullopt;
    target.azure->request_timeout = *parsed;
  }
  if (auto problem = target.azure->validate()) {
    error = *problem;
    if (problem->starts_with("account")) {
      error +=
          "; set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT (with "
          "AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or alone for Entra ID: workload "
          "identity or managed identity)";
    }
    return std::nullopt;
  }
  std::string problem;
  target.azure = target.azure->resolved(problem);  // valid: the connection string applies
  return target;
}

}  // namespace

std::string store_target::url() const {
  return (azure ? "az://" : "s3://") + bucket() + "/" + key;
}

const std::string& store_target::bucket() const noexcept {
  return azure ? azure->container : config.bucket;
}

const std::string& store_target::endpoint() const noexcept {
  return azure ? azure->endpoint : config.endpoint;
}

bool store_target::answers_authenticated() const {
  return azure ? azure->answers_authenticated() : config.answers_authenticated();
}

std::chrono::milliseconds store_target::request_timeout() const noexcept {
  return azure ? azure->request_timeout : config.request_timeout;
}

void store_target::set_request_timeout(std::chrono::milliseconds timeout) noexcept {
  (azure ? azure->request_timeout : config.request_timeout) = timeout;
}

std::optional<store_target> make_store_target(const parsed_args& args, std::string& error) {
  const auto lock = args.get("lock");
  if (!lock) {
    error = "missing --lock s3://BUCKET/KEY";
    return std::nullopt;
  }
  auto location = parse_store_location(*lock, error);
  if (!location) return std::nullopt;
  if (location->azure) return make_azure_target(args, std::move(*location), error);

  store_target target;
  target.key = location->key;
  target.config.bucket = location->bucket;
  if (auto endpoint = args.get("endpoint")) target.config.endpoint = *endpoint;
  if (auto region = args.get("region")) target.config.region = *region;
  if (auto ca_file = args.get("ca-file")) target.config.tls.ca_file = *ca_file;
  if (args.has("path-style")) target.config.addressing = addressing_style::path;
  if (auto timeout = args.get("request-timeout")) {
    auto parsed = request_timeout_of(*timeout, error);
    if (!parsed) return std::nullopt;
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
