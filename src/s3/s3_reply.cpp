#include "s3_reply.hpp"

#include <s3lect/error.hpp>

#include <array>
#include <charconv>

namespace s3lect::inline v1::detail {
namespace {

bool is_put(s3_operation operation) {
  return operation == s3_operation::put_if_absent || operation == s3_operation::put_if_match;
}

reply_verdict fail(errc e) {
  return {make_error_code(e), false};
}

/// Reads exactly `digits` decimal digits at `pos`.
std::optional<int> read_number(std::string_view text, std::size_t pos, std::size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  const char* first = text.data() + pos;
  const auto [end, ec] = std::from_chars(first, first + digits, value);
  if (ec != std::errc{} || end != first + digits) return std::nullopt;
  return value;
}

}  // namespace

reply_verdict classify_reply(s3_operation operation, unsigned status, std::string_view s3_code) {
  if (status >= 200 && status < 300) return {};
  if (status < 200 || status >= 600) return fail(errc::protocol_error);

  // Authentication verdicts come as 403 from AWS and some stores, as 400 from others.
  if (status >= 400 && status < 500) {
    if (s3_code == "SignatureDoesNotMatch") return fail(errc::signature_mismatch);
    if (s3_code == "InvalidAccessKeyId") return fail(errc::invalid_access_key);
    if (s3_code == "RequestTimeTooSkewed") return fail(errc::clock_skewed);
  }

  switch (status) {
    case 404:
      if (s3_code == "NoSuchBucket") return fail(errc::no_such_bucket);
      // AWS answers a missing key under If-Match with 404: "not the object you expected".
      if (operation == s3_operation::put_if_match) return fail(errc::precondition_failed);
      if (operation == s3_operation::put_if_absent) return fail(errc::bad_request);
      return {{}, true};
    case 412:
      return fail(errc::precondition_failed);
    case 409:
      return fail(errc::conflict);
    case 403:
      return fail(errc::access_denied);
    case 429:
      return fail(errc::throttled);
    default:
      break;
  }
  if (status >= 500) {
    // A conditional PUT that met a server error may have committed: Ceph RGW answers some race
    // losers with 500 while AWS may fail after the write. Only a re-read can tell. That includes
    // 503 SlowDown: AWS documents it as "reduce your request rate", not as "not applied", and no
    // store we support guarantees the PUT was refused before it took effect.
    if (is_put(operation)) return fail(errc::outcome_unknown);
    return fail(status == 503 && s3_code == "SlowDown" ? errc::throttled : errc::server_error);
  }
  // 3xx (a redirect to another region or endpoint) and the remaining 4xx: no retry helps.
  return fail(errc::bad_request);
}

std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": fixed width, 29 characters.
  static constexpr std::array<std::string_view, 7> day_names = {"Mon", "Tue", "Wed", "Thu",
                                                                "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 12> month_names = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29) return std::nullopt;
  bool known_day = false;
  for (std::string_view name : day_names) known_day = known_day || text.substr(0, 3) == name;
  if (!known_day || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  unsigned month = 0;
  for (unsigned i = 0; i < month_names.size(); ++i) {
    if (text.substr(8, 3) == month_names[i]) month = i + 1;
  }
  const auto day = read_number(text, 5, 2);
  const auto year = read_number(text, 12, 4);
  const auto hour = read_number(text, 17, 2);
  const auto minute = read_number(text, 20, 2);
  const auto second = read_number(text, 23, 2);
  if (month == 0 || !day || !year || !hour || !minute || !second) return std::nullopt;
  // 60 is a leap second; system_clock has none, so it reads as the next minute's first second.
  if (*hour > 23 || *minute > 59 || *second > 60) return std::nullopt;

  const std::chrono::year_month_day date{std::chrono::year{*year}, std::chrono::month{month},
                                         std::chrono::day{static_cast<unsigned>(*day)}};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days{date} + std::chrono::hours{*hour} + std::chrono::minutes{*minute} +
         std::chrono::seconds{*second};
}

}  // namespace s3lect::inline v1::detail
