// Loopback fakes of the AWS credential endpoints, built on scripted_http_server: EC2 instance
// metadata (IMDSv2 with session tokens that expire), the ECS/EKS container endpoint, and STS
// AssumeRoleWithWebIdentity. Plus scoped_aws_environment, which gives a test a clean AWS
// environment and a temporary HOME, and keeps IMDS disabled unless a test points it at a fake:
// no test traffic ever leaves 127.0.0.1.
#pragma once

#include "manual_clock.hpp"
#include "support/scripted_http_server.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::test {

/// Credentials a fake endpoint hands out.
struct served_credentials {
  std::string access_key_id = "ASIAFAKEKEY0001";
  std::string secret_access_key = "fake-secret-never-logged";
  std::string session_token = "fake-session-token";
  std::chrono::system_clock::time_point expiration =
      std::chrono::system_clock::now() + std::chrono::hours(6);
};

/// "YYYY-MM-DDTHH:MM:SSZ", as AWS writes expirations.
inline std::string aws_time(std::chrono::system_clock::time_point when) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(when);
  const auto day = std::chrono::floor<std::chrono::days>(seconds);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::seconds> time{seconds - day};
  char text[32];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return text;
}

/// The JSON document IMDS (with Code) and the container endpoint (without) send.
inline std::string credentials_json(const served_credentials& creds, bool with_code) {
  std::string body = "{";
  if (with_code)
    body += R"("Code":"Success","LastUpdated":")" + aws_time(std::chrono::system_clock::now()) +
            R"(","Type":"AWS-HMAC",)";
  body += R"("AccessKeyId":")" + creds.access_key_id + R"(","SecretAccessKey":")" +
          creds.secret_access_key + R"(","Token":")" + creds.session_token + R"(","Expiration":")" +
          aws_time(creds.expiration) + R"("})";
  return body;
}

/// Decodes application/x-www-form-urlencoded text into its fields.
inline std::map<std::string, std::string> decode_form(std::string_view body) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  const auto decode = [&hex](std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '+') {
        out += ' ';
      } else if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
                 hex(text[i + 2]) >= 0) {
        out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
        i += 2;
      } else {
        out += text[i];
      }
    }
    return out;
  };
  std::map<std::string, std::string> fields;
  while (!body.empty()) {
    const std::size_t amp = body.find('&');
    const std::string_view pair = body.substr(0, amp);
    const std::size_t equals = pair.find('=');
    fields[decode(pair.substr(0, equals))] =
        equals == std::string_view::npos ? std::string() : decode(pair.substr(equals + 1));
    body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
  }
  return fields;
}

/// IMDSv2: `PUT /latest/api/token` grants a token for the requested TTL (capped by
/// max_token_ttl), echoed in X-aws-ec2-metadata-token-ttl-seconds; every GET without a known,
/// unexpired token gets 401, as the real service does once IMDSv1 is turned off. Its tokens
/// expire on `clock`: the real clocks, or the test's manual clock that the provider reads too.
class fake_imds {
 public:
  explicit fake_imds(detail::clock_source clock = {})
      : clock_(clock),
        server_([this](const recorded_request& request) { return handle(request); }) {}

  std::string endpoint() const { return server_.endpoint(); }
  std::vector<recorded_request> requests() const { return server_.requests(); }

  void set_credentials(served_credentials creds) {
    std::lock_guard lock(mutex_);
    creds_ = std::move(creds);
  }
  /// The role the instance profile lists; empty: no role attached (404).
  void set_role(std::string role) {
    std::lock_guard lock(mutex_);
    role_ = std::move(role);
  }
  void set_max_token_ttl(std::chrono::seconds ttl) {
    std::lock_guard lock(mutex_);
    max_ttl_ = ttl;
  }
  /// Like a restarted metadata service: every token granted so far is unknown from now on.
  void forget_tokens() {
    std::lock_guard lock(mutex_);
    tokens_.clear();
  }
  /// Answers token requests with this status instead of a token (0: grant them again).
  void refuse_tokens(unsigned status) {
    std::lock_guard lock(mutex_);
    refuse_status_ = status;
  }
  /// Answers credential GETs with this status (0: serve them again).
  void fail_credentials(unsigned status) {
    std::lock_guard lock(mutex_);
    fail_status_ = status;
  }

  std::size_t tokens_granted() const {
    std::lock_guard lock(mutex_);
    return tokens_granted_;
  }
  std::size_t unauthorized() const {
    std::lock_guard lock(mutex_);
    return unauthorized_;
  }
  std::size_t credentials_served() const {
    std::lock_guard lock(mutex_);
    return credentials_served_;
  }

 private:
  scripted_reply handle(const recorded_request& request) {
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    if (request.target == "/latest/api/token") {
      if (request.method != "PUT") return http_reply(405);
      const std::string ttl_text = request.header("X-aws-ec2-metadata-token-ttl-seconds");
      long ttl = 0;
      try {
        ttl = ttl_text.empty() ? 0 : std::stol(ttl_text);
      } catch (...) {
        ttl = 0;
      }
      if (ttl < 1 || ttl > 21600) return http_reply(400);
      if (refuse_status_ != 0) return http_reply(refuse_status_);
      ttl = std::min<long>(ttl, static_cast<long>(max_ttl_.count()));
      const std::string token = "imds-token-" + std::to_string(++tokens_granted_);
      tokens_[token] = now + std::chrono::seconds(ttl);
      return http_reply(200, token,
                        {"X-aws-ec2-metadata-token-ttl-seconds: " + std::to_string(ttl)});
    }
    if (request.method != "GET") return http_reply(405);
    const std::string token = request.header("X-aws-ec2-metadata-token");
    const auto known = tokens_.find(token);
    if (token.empty() || known == tokens_.end() || known->second <= now) {
      ++unauthorized_;
      return http_reply(401);
    }
    const std::string prefix = "/latest/meta-data/iam/security-credentials/";
    if (request.target == prefix) {
      if (role_.empty()) return http_reply(404);
      return http_reply(200, role_ + "\n");
    }
    if (request.target.starts_with(prefix) && !role_.empty() &&
        request.target.substr(prefix.size()) == role_) {
      if (fail_status_ != 0) return http_reply(fail_status_);
      ++credentials_served_;
      return http_reply(200, credentials_json(creds_, true), {"Content-Type: text/plain"});
    }
    return http_reply(404);
  }

  mutable std::mutex mutex_;
  served_credentials creds_;
  std::string role_ = "s3lect-test-role";
  std::chrono::seconds max_ttl_{21600};
  const detail::clock_source clock_;
  std::map<std::string, detail::boot_clock::time_point> tokens_;
  unsigned refuse_status_ = 0;
  unsigned fail_status_ = 0;
  std::size_t tokens_granted_ = 0;
  std::size_t unauthorized_ = 0;
  std::size_t credentials_served_ = 0;
  scripted_http_server server_;  // last: its thread calls handle()
};

/// The ECS task role endpoint / EKS Pod Identity agent: GET of `path` with the expected
/// Authorization header (when one is set) returns the credentials JSON.
class fake_container_endpoint {
 public:
  explicit fake_container_endpoint(std::string path = "/v2/credentials/3f1c9a")
      : path_(std::move(path)),
        server_([this](const recorded_request& request) { return handle(request); }) {}

  /// The URL for AWS_CONTAINER_CREDENTIALS_FULL_URI.
  std::string full_uri() const { return server_.endpoint() + path_; }
  std::vector<recorded_request> requests() const { return server_.requests(); }

  void set_credentials(served_credentials creds) {
    std::lock_guard lock(mutex_);
    creds_ = std::move(creds);
  }
  /// The Authorization value required; empty: none required.
  void require_authorization(std::string token) {
    std::lock_guard lock(mutex_);
    authorization_ = std::move(token);
  }
  void fail_with(unsigned status) {
    std::lock_guard lock(mutex_);
    fail_status_ = status;
  }
  std::size_t credentials_served() const {
    std::lock_guard lock(mutex_);
    return served_;
  }

 private:
  scripted_reply handle(const recorded_request& request) {
    std::lock_guard lock(mutex_);
    if (request.method != "GET" || request.target != path_) return http_reply(404);
    if (!authorization_.empty() && request.header("Authorization") != authorization_) {
      return http_reply(401, R"({"code":"AccessDenied","message":"bad authorization token"})",
                        {"Content-Type: application/json"});
    }
    if (fail_status_ != 0) {
      return http_reply(fail_status_, R"({"code":"InternalError","message":"scripted failure"})",
                        {"Content-Type: application/json"});
    }
    ++served_;
    return http_reply(200, credentials_json(creds_, false), {"Content-Type: application/json"});
  }

  std::string path_;
  mutable std::mutex mutex_;
  served_credentials creds_;
  std::string authorization_;
  unsigned fail_status_ = 0;
  std::size_t served_ = 0;
  scripted_http_server server_;  // last: its thread calls handle()
};

/// STS AssumeRoleWithWebIdentity: a form POST naming the expected role and carrying the expected
/// token gets credentials; a wrong token gets STS's XML error.
class fake_sts {
 public:
  fake_sts(std::string role_arn, std::string token)
      : role_arn_(std::move(role_arn)),
        token_(std::move(token)),
        server_([this](const recorded_request& request) { return handle(request); }) {}

  std::string endpoint() const { return server_.endpoint(); }
  std::vector<recorded_request> requests() const { return server_.requests(); }

  /// The token accepted from now on (a rotated token file).
  void expect_token(std::string token) {
    std::lock_guard lock(mutex_);
    token_ = std::move(token);
  }
  void set_credentials(served_credentials creds) {
    std::lock_guard lock(mutex_);
    creds_ = std::move(creds);
  }
  std::size_t credentials_served() const {
    std::lock_guard lock(mutex_);
    return served_;
  }
  /// The form fields of the last request.
  std::map<std::string, std::string> last_form() const {
    std::lock_guard lock(mutex_);
    return last_form_;
  }

 private:
  static scripted_reply sts_error(unsigned status, std::string_view code,
                                  std::string_view message) {
    return http_reply(status,
                      "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                      "<Error><Type>Sender</Type><Code>" +
                          std::string(code) + "</Code><Message>" + std::string(message) +
                          "</Message></Error><RequestId>fake-1</RequestId></ErrorResponse>",
                      {"Content-Type: text/xml"});
  }

  scripted_reply handle(const recorded_request& request) {
    std::lock_guard lock(mutex_);
    if (request.method != "POST" || request.target != "/") return http_reply(404);
    last_form_ = decode_form(request.body);
    if (last_form_["Action"] != "AssumeRoleWithWebIdentity" ||
        last_form_["Version"] != "2011-06-15") {
      return sts_error(400, "InvalidAction", "unknown action");
    }
    if (last_form_["WebIdentityToken"] != token_) {
      return sts_error(400, "InvalidIdentityToken", "Couldn&apos;t retrieve verification key");
    }
    if (last_form_["RoleArn"] != role_arn_) {
      return sts_error(403, "AccessDenied",
                       "Not authorized to perform sts:AssumeRoleWithWebIdentity");
    }
    ++served_;
    return http_reply(
        200,
        "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
        "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>" +
            creds_.access_key_id + "</AccessKeyId><SecretAccessKey>" + creds_.secret_access_key +
            "</SecretAccessKey><SessionToken>" + creds_.session_token +
            "</SessionToken><Expiration>" + aws_time(creds_.expiration) +
            "</Expiration></Credentials><SubjectFromWebIdentityToken>system:serviceaccount:"
            "default:s3lect</SubjectFromWebIdentityToken><AssumedRoleUser><Arn>" +
            role_arn_ + "/" + last_form_["RoleSessionName"] +
            "</Arn><AssumedRoleId>AROAFAKE:s3lect</AssumedRoleId></AssumedRoleUser>"
            "</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>fake-2</RequestId>"
            "</ResponseMetadata></AssumeRoleWithWebIdentityResponse>",
        {"Content-Type: text/xml"});
  }

  std::string role_arn_;
  mutable std::mutex mutex_;
  std::string token_;
  served_credentials creds_;
  std::map<std::string, std::string> last_form_;
  std::size_t served_ = 0;
  scripted_http_server server_;  // last: its thread calls handle()
};

/// A clean AWS environment for one test: every variable the credential chain and s3_config read
/// is saved and unset, HOME is a fresh temporary directory, and AWS_EC2_METADATA_DISABLED=true
/// so that a chain never reaches for 169.254.169.254. Everything is restored on destruction.
class scoped_aws_environment {
 public:
  scoped_aws_environment() {
    for (const char* name : variables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
    std::random_device device;
    home_ = std::filesystem::temp_directory_path() /
            ("s3lect-home-" + std::to_string(device()) + std::to_string(device()));
    std::filesystem::create_directories(home_);
    set("HOME", home_.string());
    set("AWS_EC2_METADATA_DISABLED", "true");
  }

  ~scoped_aws_environment() {
    for (const char* name : variables) {
      ::unsetenv(name);
      if (auto it = saved_.find(name); it != saved_.end()) {
        ::setenv(name, it->second.c_str(), 1);
      }
    }
    std::error_code ignored;
    std::filesystem::remove_all(home_, ignored);
  }

  scoped_aws_environment(const scoped_aws_environment&) = delete;
  scoped_aws_environment& operator=(const scoped_aws_environment&) = delete;

  void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }
  void unset(const char* name) { ::unsetenv(name); }

  const std::filesystem::path& home() const { return home_; }

  /// Writes `content` at `relative` under HOME (directories created) and returns the path.
  std::string write_file(const std::string& relative, const std::string& content) const {
    const std::filesystem::path path = home_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    return path.string();
  }

 private:
  static constexpr const char* variables[] = {
      "HOME",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
      "AWS_REGION",
      "AWS_DEFAULT_REGION",
      "AWS_PROFILE",
      "AWS_SHARED_CREDENTIALS_FILE",
      "AWS_CONFIG_FILE",
      "AWS_WEB_IDENTITY_TOKEN_FILE",
      "AWS_ROLE_ARN",
      "AWS_ROLE_SESSION_NAME",
      "AWS_ENDPOINT_URL",
      "AWS_ENDPOINT_URL_S3",
      "AWS_ENDPOINT_URL_STS",
      "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
      "AWS_CONTAINER_CREDENTIALS_FULL_URI",
      "AWS_CONTAINER_AUTHORIZATION_TOKEN",
      "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
      "AWS_EC2_METADATA_SERVICE_ENDPOINT",
      "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
      "AWS_EC2_METADATA_DISABLED",
  };
  std::map<std::string, std::string> saved_;
  std::filesystem::path home_;
};

}  // namespace s3lect::test
