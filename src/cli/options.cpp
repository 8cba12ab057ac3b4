#include "cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace s3lect::cli {

std::optional<s3_location> parse_s3_location(std::string_view text, std::string& error) {
  constexpr std::string_view scheme = "s3://";
  if (text.substr(0, scheme.size()) != scheme) {
    error = "expected s3://BUCKET/KEY, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  text.remove_prefix(scheme.size());
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) {
    error = "expected s3://BUCKET/KEY with a non-empty bucket and key";
    return std::nullopt;
  }
  return s3_location{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds{0};
  if (text.empty()) return std::nullopt;
  std::int64_t total_ms = 0;
  while (!text.empty()) {
    std::int64_t number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc{} || end == text.data() || number < 0) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    std::int64_t unit_ms = 0;
    if (text.substr(0, 2) == "ms") {
      unit_ms = 1;
      text.remove_prefix(2);
    } else if (text.substr(0, 1) == "s") {
      unit_ms = 1000;
      text.remove_prefix(1);
    } else if (text.substr(0, 1) == "m") {
      unit_ms = 60'000;
      text.remove_prefix(1);
    } else if (text.substr(0, 1) == "h") {
      unit_ms = 3'600'000;
      text.remove_prefix(1);
    } else {
      return std::nullopt;  // A bare number is ambiguous: demand a unit.
    }
    // Durations beyond a year are certainly typos; refusing them also rules out overflow.
    constexpr std::int64_t year_ms = 366LL * 24 * 3'600'000;
    if (number > year_ms / unit_ms) return std::nullopt;
    total_ms += number * unit_ms;
    if (total_ms > year_ms) return std::nullopt;
  }
  return std::chrono::milliseconds{total_ms};
}

std::optional<parsed_args> parsed_args::parse(const std::vector<std::string>& args,
                                              const std::vector<std::string>& flags,
                                              const std::vector<std::string>& valued,
                                              std::string& error) {
  const auto contains = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  parsed_args result;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      result.trailing_.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      result.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (result.values_.count(name) != 0) {
      error = "option --" + name + " given twice";
      return std::nullopt;
    }
    if (contains(flags, name)) {
      if (inline_value) {
        error = "option --" + name + " takes no value";
        return std::nullopt;
      }
      result.values_[name] = "";
    } else if (contains(valued, name)) {
      if (inline_value) {
        result.values_[name] = *inline_value;
      } else if (i + 1 < args.size()) {
        result.values_[name] = args[++i];
      } else {
        error = "option --" + name + " needs a value";
        return std::nullopt;
      }
    } else {
      error = "unknown option --" + name;
      return std::nullopt;
    }
  }
  return result;
}

std::optional<std::string> parsed_args::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace s3lect::cli
