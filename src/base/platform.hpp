// Which Linux facilities this build uses. S3LECT_LINUX_FACILITIES is 1 on Linux and 0 on other
// POSIX systems (macOS, FreeBSD), and also on Linux when the build defines
// S3LECT_PORTABLE_FALLBACKS (the CMake option of that name), which compiles the other systems'
// code paths here so that CI builds and tests them. Every Linux-only call is under
// `#if S3LECT_LINUX_FACILITIES` with its POSIX fallback in the #else; docs/operations.md
// (Other systems) says what each fallback gives up. Internal: no public header includes it, so
// the choice is never imposed on an application.
#pragma once

#include <time.h>

#if defined(__linux__) && !defined(S3LECT_PORTABLE_FALLBACKS)
#define S3LECT_LINUX_FACILITIES 1
#else
#define S3LECT_LINUX_FACILITIES 0
#endif

namespace s3lect::inline v1::detail {

/// True when this build uses the Linux facilities (for tests that check one).
inline constexpr bool linux_facilities = S3LECT_LINUX_FACILITIES != 0;

/// The clock leadership deadlines are measured on, by s3lect and its job guardian alike (they
/// exchange times on it). CLOCK_BOOTTIME counts a suspend; elsewhere CLOCK_MONOTONIC, which
/// counts one on macOS but not on every system.
#if S3LECT_LINUX_FACILITIES
inline constexpr clockid_t boot_clock_id = CLOCK_BOOTTIME;
#else
inline constexpr clockid_t boot_clock_id = CLOCK_MONOTONIC;
#endif

}  // namespace s3lect::inline v1::detail
