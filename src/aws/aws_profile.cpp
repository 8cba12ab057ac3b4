#include "aws_profile.hpp"

#include "sts.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace s3lect::inline v1::detail {
namespace {

namespace asio = boost::asio;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// `value` without a trailing comment: '#' or ';' preceded by whitespace starts one.
std::string_view strip_trailing_comment(std::string_view value) {
  for (std::size_t i = 1; i < value.size(); ++i) {
    if ((value[i] == '#' || value[i] == ';') && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
      return trim_space(value.substr(0, i));
    }
  }
  return value;
}

std::string line_problem(std::size_t line, std::string_view what) {
  return "line " + std::to_string(line) + ": " + std::string(what);
}

/// The profile name a config-file section stands for: "[default]" and "[profile default]" are
/// "default", "[profile NAME]" is NAME; other sections (sso-session, services, or a bare
/// "[NAME]" the CLI ignores too) stand for none.
std::optional<std::string> config_section_profile(std::string_view section) {
  if (section == "default") return std::string("default");
  if (!section.starts_with("profile") || section.size() <= 7) return std::nullopt;
  if (section[7] != ' ' && section[7] != '\t') return std::nullopt;
  const std::string_view name = trim_space(section.substr(8));
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

std::string with_problems(std::string message, const std::vector<std::string>& problems) {
  if (problems.empty()) return message;
  return message + " (skipped lines: " + join(problems, "; ") + ")";
}

class profile_provider final : public coroutine_provider {
 public:
  profile_provider(asio::any_io_executor executor, profile_provider_settings settings)
      : coroutine_provider(std::move(executor)),
        settings_(std::move(settings)),
        profile_(selected_profile(settings_.profile, settings_.env)),
        explicit_(!settings_.profile.empty() || !settings_.env.get("AWS_PROFILE").empty()),
        label_("profile " + profile_) {}

  std::string name() const override { return label_; }

  asio::awaitable<fetch_outcome> fetch() override {
    const shared_file_paths paths = locate_shared_files(settings_.env);
    if (paths.credentials_file.empty() && paths.config_file.empty()) {
      co_return fetch_failure(credentials_errc::not_configured,
                              label_ + ": HOME is not set and no shared file is named");
    }
    std::string problem;
    std::optional<std::string> credentials_text = read_if_named(paths.credentials_file, problem);
    std::optional<std::string> config_text;
    if (problem.empty()) config_text = read_if_named(paths.config_file, problem);
    if (!problem.empty()) {
      co_return fetch_failure(credentials_errc::fetch_failed, label_ + ": " + problem);
    }

    const profile_lookup lookup = find_profile(credentials_text, paths.credentials_file,
                                               config_text, paths.config_file, profile_);
    if (!lookup.found) {
      std::string where = "not found in " + paths.credentials_file;
      if (!credentials_text) where += " (absent)";
      where += " or " + paths.config_file;
      if (!config_text) where += " (absent)";
      // A profile the user named must exist; a missing default just means "not this way".
      co_return fetch_failure(
          explicit_ ? credentials_errc::fetch_failed : credentials_errc::not_configured,
          with_problems(label_ + ": " + where, lookup.problems));
    }

    profile_credentials found = interpret_profile(lookup.properties, profile_);
    switch (found.type) {
      case profile_credentials::kind::none:
        co_return fetch_failure(
            credentials_errc::not_configured,
            with_problems(label_ + ": no credentials in the profile", lookup.problems));
      case profile_credentials::kind::invalid:
        co_return fetch_failure(found.error, with_problems(found.message, lookup.problems));
      case profile_credentials::kind::static_keys:
        co_return fetch_success(std::move(found.credentials));
      case profile_credentials::kind::web_identity:
        break;
    }
    co_return co_await assume_web_identity(std::move(found));
  }

 private:
  /// The file's text; nullopt when no path is named or the file is absent (`problem` set when
  /// it exists but cannot be read).
  static std::optional<std::string> read_if_named(const std::string& path, std::string& problem) {
    if (path.empty()) return std::nullopt;
    return read_small_file(path, problem);
  }

  /// The role of a web identity profile, through STS.
  asio::awaitable<fetch_outcome> assume_web_identity(profile_credentials found) {
    web_identity_settings sts;
    sts.role_arn = found.role_arn;
    sts.token_file = found.token_file;
    sts.session_name = found.session_name;
    sts.env = settings_.env;
    sts.region = settings_.sts_region;
    sts.http_timeout = settings_.http_timeout;
    sts.provider_label = label_;
    auto provider = make_web_identity_provider(executor(), std::move(sts));
    auto [ec, result] = co_await provider->async_fetch(asio::as_tuple(asio::use_awaitable));
    fetch_outcome outcome;
    outcome.ec = ec;
    outcome.result = std::move(result);
    co_return outcome;
  }

  profile_provider_settings settings_;
  std::string profile_;
  bool explicit_;
  std::string label_;
};

}  // namespace

namespace {

/// parse_ini()'s state between lines.
class ini_parser {
 public:
  void line(std::string_view line) {
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view trimmed = trim_space(line);
    if (trimmed.empty() || trimmed.front() == '#' || trimmed.front() == ';') return;
    const bool indented = line.front() == ' ' || line.front() == '\t';
    if (indented && section_ && !property_.empty()) {
      continuation(trimmed);
    } else if (trimmed.front() == '[') {
      section_header(trimmed);
    } else {
      property(trimmed);
    }
  }

  ini_file take() { return std::move(file_); }

 private:
  void problem(const char* what) { file_.problems.push_back(line_problem(line_number_, what)); }

  /// An indented line: more of the last property's value, or a nested setting under an empty
  /// one ("s3 =\n  addressing_style = path").
  void continuation(std::string_view trimmed) {
    std::string& parent = (*section_)[property_];
    const std::size_t equals = trimmed.find('=');
    if (parent.empty() && equals != std::string_view::npos) {
      const std::string key = lower(trim_space(trimmed.substr(0, equals)));
      if (key.empty()) return problem("nested property without a name");
      (*section_)[property_ + "." + key] =
          std::string(strip_trailing_comment(trim_space(trimmed.substr(equals + 1))));
    } else if (!parent.empty()) {
      parent += "\n";
      parent += strip_trailing_comment(trimmed);
    } else {
      problem("indented line without a property");
    }
  }

  void section_header(std::string_view trimmed) {
    section_ = nullptr;
    property_.clear();
    const std::size_t close = trimmed.find(']');
    if (close == std::string_view::npos) return problem("section header without ']'");
    const std::string_view after = trim_space(trimmed.substr(close + 1));
    if (!after.empty() && after.front() != '#' && after.front() != ';') {
      return problem("text after a section header");
    }
    const std::string_view name = trim_space(trimmed.substr(1, close - 1));
    if (name.empty()) return problem("empty section name");
    section_ = &file_.sections[std::string(name)];
  }

  void property(std::string_view trimmed) {
    const std::size_t equals = trimmed.find('=');
    if (equals == std::string_view::npos) {
      property_.clear();
      return problem("expected 'name = value'");
    }
    if (!section_) return problem("property outside a valid section");
    std::string key = lower(trim_space(trimmed.substr(0, equals)));
    if (key.empty()) {
      property_.clear();
      return problem("property without a name");
    }
    (*section_)[key] = std::string(strip_trailing_comment(trim_space(trimmed.substr(equals + 1))));
    property_ = std::move(key);
  }

  ini_file file_;
  ini_section* section_ = nullptr;
  std::string property_;  // the last property of `section_`, for indented lines
  std::size_t line_number_ = 0;
};

}  // namespace

ini_file parse_ini(std::string_view text) {
  ini_parser parser;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    parser.line(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return parser.take();
}

shared_file_paths locate_shared_files(const environment_snapshot& env) {
  const std::string home = env.get("HOME");
  const auto resolve = [&home](std::string path, std::string_view fallback) -> std::string {
    if (path.empty()) {
      if (home.empty()) return {};
      return home + std::string(fallback);
    }
    if (path == "~" || path.starts_with("~/")) {
      if (home.empty()) return {};
      return home + path.substr(1);
    }
    return path;
  };
  shared_file_paths paths;
  paths.credentials_file = resolve(env.get("AWS_SHARED_CREDENTIALS_FILE"), "/.aws/credentials");
  paths.config_file = resolve(env.get("AWS_CONFIG_FILE"), "/.aws/config");
  return paths;
}

std::string selected_profile(std::string_view configured, const environment_snapshot& env) {
  if (!configured.empty()) return std::string(configured);
  std::string from_environment = env.get("AWS_PROFILE");
  return from_environment.empty() ? std::string("default") : from_environment;
}

profile_lookup find_profile(const std::optional<std::string>& credentials_text,
                            std::string_view credentials_path,
                            const std::optional<std::string>& config_text,
                            std::string_view config_path, std::string_view profile) {
  profile_lookup lookup;
  if (config_text) {
    ini_file config = parse_ini(*config_text);
    for (const auto& problem : config.problems) {
      lookup.problems.push_back(std::string(config_path) + " " + problem);
    }
    // "[profile default]" wins over "[default]" when a file has both, as in the CLI.
    const ini_section* chosen = nullptr;
    bool chosen_prefixed = false;
    for (const auto& [section, properties] : config.sections) {
      const auto name = config_section_profile(section);
      if (!name || *name != profile) continue;
      const bool prefixed = section != "default";
      if (!chosen || (prefixed && !chosen_prefixed)) {
        chosen = &properties;
        chosen_prefixed = prefixed;
      }
    }
    if (chosen) {
      lookup.found = true;
      lookup.properties = *chosen;
    }
  }
  if (credentials_text) {
    ini_file credentials = parse_ini(*credentials_text);
    for (const auto& problem : credentials.problems) {
      lookup.problems.push_back(std::string(credentials_path) + " " + problem);
    }
    if (auto it = credentials.sections.find(profile); it != credentials.sections.end()) {
      lookup.found = true;
      for (const auto& [key, value] : it->second) lookup.properties[key] = value;
    }
  }
  return lookup;
}

namespace {

std::string property_of(const ini_section& properties, std::string_view key) {
  const auto it = properties.find(key);
  return it == properties.end() ? std::string() : it->second;
}

profile_credentials invalid_profile(const std::string& label, credentials_errc error,
                                    std::string problem) {
  profile_credentials out;
  out.type = profile_credentials::kind::invalid;
  out.error = error;
  out.message = label + ": " + std::move(problem);
  return out;
}

/// The profile's keys: kind::none without any, kind::invalid when incomplete or unusable.
profile_credentials static_keys_of(const ini_section& properties, const std::string& label) {
  profile_credentials out;
  const std::string key_id = property_of(properties, "aws_access_key_id");
  const std::string secret = property_of(properties, "aws_secret_access_key");
  if (key_id.empty() && secret.empty()) return out;  // kind::none
  if (key_id.empty()) {
    return invalid_profile(label, credentials_errc::malformed,
                           "aws_secret_access_key is set but aws_access_key_id is not");
  }
  if (secret.empty()) {
    return invalid_profile(label, credentials_errc::malformed,
                           "aws_access_key_id is set but aws_secret_access_key is not");
  }
  out.credentials.access_key_id = key_id;
  out.credentials.secret_access_key = secret;
  out.credentials.session_token = property_of(properties, "aws_session_token");
  out.credentials.provider = label;
  if (const std::string problem =
          credentials_problem(out.credentials, std::chrono::system_clock::now());
      !problem.empty()) {
    return invalid_profile(label, credentials_errc::malformed, problem);
  }
  out.type = profile_credentials::kind::static_keys;
  return out;
}

}  // namespace

profile_credentials interpret_profile(const ini_section& properties, std::string_view name) {
  const auto get = [&properties](std::string_view key) { return property_of(properties, key); };
  const std::string label = "profile " + std::string(name);
  // Role settings come first, as in the SDKs: a profile with role_arn means "assume this role",
  // even if it also holds keys (those belong to the source of the role).
  if (!get("role_arn").empty()) {
    if (get("web_identity_token_file").empty()) {
      return invalid_profile(
          label, credentials_errc::unsupported,
          "role_arn with source_profile or credential_source (AssumeRole) is not supported; use "
          "static keys, web_identity_token_file, or AWS_PROFILE naming a profile with keys");
    }
    profile_credentials out;
    out.type = profile_credentials::kind::web_identity;
    out.role_arn = get("role_arn");
    out.token_file = get("web_identity_token_file");
    out.session_name = get("role_session_name");
    return out;
  }
  if (!get("credential_process").empty()) {
    return invalid_profile(label, credentials_errc::unsupported,
                           "credential_process is not supported");
  }
  if (!get("sso_session").empty() || !get("sso_start_url").empty() ||
      !get("sso_account_id").empty()) {
    return invalid_profile(label, credentials_errc::unsupported,
                           "SSO profiles are not supported; export the role's keys "
                           "(aws configure export-credentials) or use another provider");
  }
  return static_keys_of(properties, label);
}

std::string profile_region(const environment_snapshot& env, std::string_view profile) {
  const shared_file_paths paths = locate_shared_files(env);
  if (paths.config_file.empty()) return {};
  std::string problem;
  const std::optional<std::string> config_text = read_small_file(paths.config_file, problem);
  if (!config_text) return {};
  const profile_lookup lookup = find_profile(std::nullopt, paths.credentials_file, config_text,
                                             paths.config_file, selected_profile(profile, env));
  const auto it = lookup.properties.find("region");
  if (it == lookup.properties.end() || !is_header_safe(it->second)) return {};
  return it->second;
}

std::shared_ptr<coroutine_provider> make_profile_provider(asio::any_io_executor executor,
                                                          profile_provider_settings settings) {
  return std::make_shared<profile_provider>(std::move(executor), std::move(settings));
}

}  // namespace s3lect::inline v1::detail
