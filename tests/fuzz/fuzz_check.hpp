// Invariant checks for the fuzz targets: active whatever NDEBUG says, and loud enough that the
// reproducer's log tells which invariant broke.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace s3lect::fuzz {

[[noreturn]] inline void invariant_broken(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, condition);
  std::abort();
}

/// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF):
/// what Boost.JSON accepts in strings, and so what a decoded record can hold.
inline bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    unsigned min_second = 0x80, max_second = 0xBF;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) min_second = 0xA0;
      if (lead == 0xED) max_second = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) min_second = 0x90;
      if (lead == 0xF4) max_second = 0x8F;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const unsigned low = k == 1 ? min_second : 0x80;
      const unsigned high = k == 1 ? max_second : 0xBF;
      if (c < low || c > high) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace s3lect::fuzz

/// Aborts (a crash to libFuzzer) when `condition` is false.
#define S3LECT_FUZZ_CHECK(condition) \
  ((condition) ? void(0) : ::s3lect::fuzz::invariant_broken(#condition, __FILE__, __LINE__))
