// A lastUpdated as a Go s3lect writer stamps it (RFC 3339, whole seconds, UTC), for tests that
// plant a foreign record with a chosen timestamp.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace s3lect::test {

inline std::string rfc3339_seconds(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return stamp;
}

}  // namespace s3lect::test
