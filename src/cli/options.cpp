#include "cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

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

std::optional<s3_location> parse_store_location(std::string_view text, std::string& error) {
  constexpr std::string_view azure_scheme = "az://";
  if (text.substr(0, azure_scheme.size()) != azure_scheme) {
    if (text.substr(0, 5) == "s3://") return parse_s3_location(text, error);
    error = "expected s3://BUCKET/KEY or az://CONTAINER/BLOB, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  text.remove_prefix(azure_scheme.size());
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) {
    error = "expected az://CONTAINER/BLOB with a non-empty container and blob name";
    return std::nullopt;
  }
  return s3_location{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1)), true};
}

namespace {

/// Durations beyond a year are certainly typos; refusing them also rules out overflow.
constexpr std::int64_t year_ms = 366LL * 24 * 3'600'000;

enum class duration_reading { ok, malformed, too_long };

/// Reads `text` into `total_ms`: malformed, or longer than a year (however much longer).
duration_reading read_duration_text(std::string_view text, std::int64_t& total_ms) {
  total_ms = 0;
  if (text == "0") return duration_reading::ok;
  if (text.empty()) return duration_reading::malformed;
  bool too_long = false;
  while (!text.empty()) {
    std::int64_t number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc::result_out_of_range) {
      too_long = true;
    } else if (ec != std::errc{} || end == text.data() || number < 0) {
      return duration_reading::malformed;
    }
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    std::int64_t unit_ms = 0;
    for (const auto& [unit, length_ms] : {std::pair<std::string_view, std::int64_t>{"ms", 1},
                                          {"s", 1000},
                                          {"m", 60'000},
                                          {"h", 3'600'000}}) {
      if (text.starts_with(unit)) {
        unit_ms = length_ms;
        text.remove_prefix(unit.size());
        break;
      }
    }
    if (unit_ms == 0) return duration_reading::malformed;  // A bare number is ambiguous.
    too_long = too_long || number > year_ms / unit_ms;
    if (!too_long) total_ms += number * unit_ms;
    too_long = too_long || total_ms > year_ms;
  }
  return too_long ? duration_reading::too_long : duration_reading::ok;
}

}  // namespace

std::string format_duration(std::chrono::milliseconds value) {
  const auto count = value.count();
  if (count == 0) return "0";
  if (count % 3'600'000 == 0) return std::to_string(count / 3'600'000) + "h";
  if (count % 60'000 == 0) return std::to_string(count / 60'000) + "m";
  if (count % 1000 == 0) return std::to_string(count / 1000) + "s";
  return std::to_string(count) + "ms";
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::int64_t total_ms = 0;
  if (read_duration_text(text, total_ms) != duration_reading::ok) return std::nullopt;
  return std::chrono::milliseconds{total_ms};
}

std::optional<std::chrono::milliseconds> parse_duration_at_most(std::string_view option,
                                                                std::string_view text,
                                                                std::chrono::milliseconds max,
                                                                std::string& error) {
  std::int64_t total_ms = 0;
  const duration_reading reading = read_duration_text(text, total_ms);
  const std::string given = "got '" + std::string(text) + "'";
  if (reading == duration_reading::malformed) {
    error = std::string(option) + ": expected a duration such as 500ms, 15s or 1m, " + given;
    return std::nullopt;
  }
  if (reading == duration_reading::too_long || total_ms > max.count()) {
    error = std::string(option) + ": must be at most " + format_duration(max) + ", " + given;
    return std::nullopt;
  }
  return std::chrono::milliseconds{total_ms};
}

std::optional<std::uint64_t> parse_term(std::string_view origin, std::string_view text,
                                        std::string& error) {
  std::uint64_t term = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), term);
  const bool digits_only = !text.empty() && end == text.data() + text.size() &&
                           (ec == std::errc{} || ec == std::errc::result_out_of_range);
  if (!digits_only) {
    error =
        std::string(origin) + ": expected a term, a whole number, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  if (ec != std::errc{} || term < 1 || term > max_term) {
    error = std::string(origin) + ": a term is from 1 to 2^53-1 (" + std::to_string(max_term) +
            "), got " + std::string(text);
    return std::nullopt;
  }
  return term;
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
