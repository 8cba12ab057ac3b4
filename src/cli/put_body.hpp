// Where the body of `s3lect put` comes from: a regular file, streamed from where it is, or
// stdin, kept in memory when short and spooled to a temporary file when not (a single S3 PUT
// needs its length up front, and memory must not grow with the body).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace s3lect::cli {

/// stdin longer than this is spooled to a file in $TMPDIR (else /tmp).
inline constexpr std::size_t put_body_memory_bytes = 1024 * 1024;

/// The body of one `put`. Move-only; removes its spool file when destroyed.
class put_body {
 public:
  /// From `file` (a regular file, or "-" for stdin), else stdin. nullopt with `error` set when
  /// the file is missing, not a regular file or unreadable, or stdin cannot be spooled.
  static std::optional<put_body> open(const std::optional<std::string>& file, std::string& error);

  put_body(put_body&& other) noexcept;
  put_body& operator=(put_body&&) = delete;
  put_body(const put_body&) = delete;
  put_body& operator=(const put_body&) = delete;
  ~put_body();

  /// Set: the body is this file; else it is bytes().
  const std::optional<std::string>& file() const noexcept { return file_; }
  /// The body when file() is unset.
  std::string take_bytes() { return std::move(bytes_); }

 private:
  put_body() = default;
  static std::optional<put_body> from_stdin(std::string& error);

  std::string bytes_;
  std::optional<std::string> file_;
  bool spooled_ = false;  ///< file_ is ours to remove
};

}  // namespace s3lect::cli
