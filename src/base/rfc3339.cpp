#include "rfc3339.hpp"

#include <cstdio>

namespace s3lect::inline v1::detail {
namespace {

using namespace std::chrono;

constexpr std::int64_t seconds_per_day = 86'400;

// Reads exactly `count` decimal digits at `pos`, advancing it; nullopt if any is not a digit.
std::optional<int> digits(std::string_view text, std::size_t& pos, std::size_t count) {
  if (text.size() - pos < count) return std::nullopt;
  int value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  pos += count;
  return value;
}

// Consumes `expected` at `pos`; false if the text has something else there.
bool literal(std::string_view text, std::size_t& pos, char expected) {
  if (pos >= text.size() || text[pos] != expected) return false;
  ++pos;
  return true;
}

}  // namespace

bool rfc3339_instant::is_go_zero_time() const noexcept {
  constexpr std::int64_t go_zero_unix_seconds = -62'135'596'800;  // 0001-01-01T00:00:00Z
  return unix_seconds == go_zero_unix_seconds && nanoseconds == 0;
}

std::string format_rfc3339_ms(system_clock::time_point t) {
  const auto rounded = ceil<milliseconds>(t);
  const auto day = floor<days>(rounded);
  const year_month_day date{day};
  const hh_mm_ss<milliseconds> time{rounded - day};
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return text;
}

std::optional<rfc3339_instant> parse_rfc3339(std::string_view text) {
  std::size_t pos = 0;
  const auto y = digits(text, pos, 4);
  if (!y || !literal(text, pos, '-')) return std::nullopt;
  const auto mo = digits(text, pos, 2);
  if (!mo || !literal(text, pos, '-')) return std::nullopt;
  const auto d = digits(text, pos, 2);
  if (!d || !(literal(text, pos, 'T') || literal(text, pos, 't'))) return std::nullopt;
  const auto h = digits(text, pos, 2);
  if (!h || !literal(text, pos, ':')) return std::nullopt;
  const auto mi = digits(text, pos, 2);
  if (!mi || !literal(text, pos, ':')) return std::nullopt;
  const auto s = digits(text, pos, 2);
  if (!s) return std::nullopt;

  std::uint32_t nanos = 0;
  if (literal(text, pos, '.')) {
    std::size_t count = 0;
    std::uint32_t scale = 100'000'000;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (count < 9) {
        nanos += static_cast<std::uint32_t>(text[pos] - '0') * scale;
        scale /= 10;
      }
      ++count;
      ++pos;
    }
    if (count == 0) return std::nullopt;
  }

  std::int64_t offset_seconds = 0;
  if (!(literal(text, pos, 'Z') || literal(text, pos, 'z'))) {
    if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) return std::nullopt;
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    const auto oh = digits(text, pos, 2);
    if (!oh || !literal(text, pos, ':')) return std::nullopt;
    const auto om = digits(text, pos, 2);
    if (!om || *oh > 23 || *om > 59) return std::nullopt;
    offset_seconds = sign * (*oh * 3600 + *om * 60);
  }
  if (pos != text.size()) return std::nullopt;

  const year_month_day date{year{*y}, month{static_cast<unsigned>(*mo)},
                            day{static_cast<unsigned>(*d)}};
  if (!date.ok() || *h > 23 || *mi > 59 || *s > 59) return std::nullopt;

  const std::int64_t day_count = sys_days{date}.time_since_epoch().count();
  rfc3339_instant instant;
  instant.unix_seconds = day_count * seconds_per_day + *h * 3600 + *mi * 60 + *s - offset_seconds;
  instant.nanoseconds = nanos;
  return instant;
}

}  // namespace s3lect::inline v1::detail
