// The file descriptors a process running s3lect needs, checked against RLIMIT_NOFILE. Each
// connection a server holds is a descriptor; so is every S3 and peer connection, the child
// command's pipes and the event loop's own. A server refuses connections that would leave
// fewer than reserved_file_descriptors free (server_stats::refused_file_descriptors), so that
// a flood of connections cannot starve the S3 client; see docs/operations.md.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <cstdint>

namespace s3lect::inline v1 {

/// Descriptors kept free for everything but the servers' connections.
inline constexpr std::uint64_t reserved_file_descriptors = 64;

/// The RLIMIT_NOFILE of the process as ensure_file_descriptors() left it.
struct file_descriptor_limit {
  std::uint64_t soft = 0;    ///< UINT64_MAX when unlimited.
  std::uint64_t hard = 0;    ///< UINT64_MAX when unlimited.
  std::uint64_t needed = 0;  ///< The soft limit asked for (ensure_file_descriptors' argument).
  bool raised = false;       ///< The soft limit was raised by this call.
  /// False when the limit could not be read (soft and hard are then 0).
  bool known = true;
  /// True when the soft limit covers `needed` (or cannot be known).
  bool enough() const noexcept { return !known || soft >= needed; }
};

/// Raises the soft RLIMIT_NOFILE to `needed` when it is lower (up to the hard limit, or as far
/// as the system accepts: macOS caps it at OPEN_MAX; it never lowers it) and reports the result.
/// Thread-safe; affects the whole process.
file_descriptor_limit ensure_file_descriptors(std::uint64_t needed);

}  // namespace s3lect::inline v1
