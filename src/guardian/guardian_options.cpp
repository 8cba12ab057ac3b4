#include "guardian/guardian_options.hpp"

#include <unistd.h>

#include <charconv>

namespace s3lect::guardian {
namespace {

template <class Number>
bool parse_number(const std::string& text, Number& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

/// Applies one valued option; false when the name is unknown or the value invalid.
bool apply(guardian_options& options, const std::string& name, const std::string& value) {
  if (name == "--control-fd") return parse_number(value, options.control_fd);
  if (name == "--until-ns") return parse_number(value, options.confirmed.boot_ns);
  if (name == "--term") return parse_number(value, options.confirmed.term);
  if (name == "--nonce") {
    options.confirmed.nonce = value;
    return !value.empty() && value.find(' ') == std::string::npos;
  }
  if (name == "--kill-grace-ms") {
    long long grace = 0;
    if (!parse_number(value, grace) || grace < 0) return false;
    options.kill_grace = std::chrono::milliseconds(grace);
    return true;
  }
  if (name == "--isolation") {
    const auto level = parse_isolation(value);
    if (level) options.level = *level;
    return level.has_value();
  }
  if (name == "--release-exe-fd") return parse_number(value, options.release_exe_fd);
  if (name == "--release-args-fd") return parse_number(value, options.release_args_fd);
  if (name == "--job-env-fd") return parse_number(value, options.job_env_fd);
  if (name == "--release-env-fd") return parse_number(value, options.release_env_fd);
  if (name == "--log-format") {
    options.log_json = value == "json";
    return value == "json" || value == "text";
  }
  if (name == "--log-field") {
    const auto equals = value.find('=');
    if (equals == std::string::npos || equals == 0) return false;
    options.log_fields.emplace_back(value.substr(0, equals), value.substr(equals + 1));
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::vector<std::string>> read_argument_file(int fd) {
  std::string content;
  char buffer[4096];
  ssize_t got = 0;
  if (::lseek(fd, 0, SEEK_SET) != 0) got = -1;
  while (got >= 0 &&
         (got = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(content.size()))) > 0) {
    content.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (got < 0) return std::nullopt;
  std::vector<std::string> args;
  std::size_t start = 0;
  for (std::size_t end; (end = content.find('\0', start)) != std::string::npos; start = end + 1) {
    args.push_back(content.substr(start, end - start));
  }
  return args;
}

std::optional<guardian_options> parse_guardian_options(const std::vector<std::string>& args,
                                                       std::string& error) {
  guardian_options options;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "--probe") {
      options.probe = true;
    } else if (args[i] == "--log-info") {
      options.log_info = true;
    } else if (i + 1 >= args.size() || !apply(options, args[i], args[i + 1])) {
      error = "bad argument " + args[i];
      return std::nullopt;
    } else {
      ++i;
    }
  }
  if (options.probe) return options;
  if (i + 2 >= args.size()) {  // "--" PATH ARGV0 at least
    error = "missing the command after --";
    return std::nullopt;
  }
  options.path = args[i + 1];
  options.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 2, args.end());
  if (options.control_fd < 0 || options.confirmed.boot_ns <= 0 || options.confirmed.nonce.empty() ||
      options.argv.empty()) {
    error = "missing --control-fd, --until-ns, --nonce or the command";
    return std::nullopt;
  }
  return options;
}

}  // namespace s3lect::guardian
