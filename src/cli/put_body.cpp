#include "cli/put_body.hpp"

#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

namespace s3lect::cli {

namespace {

/// Reads up to `wanted` bytes of stdin into `into`; false on a read error.
bool read_stdin(std::string& into, std::size_t wanted) {
  const std::size_t start = into.size();
  into.resize(start + wanted);
  const std::size_t got = std::fread(into.data() + start, 1, wanted, stdin);
  into.resize(start + got);
  return !std::ferror(stdin);
}

/// Writes all of `bytes` to `fd`.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

std::string temporary_directory() {
  const char* configured = std::getenv("TMPDIR");
  return configured && *configured ? configured : "/tmp";
}

}  // namespace

std::optional<put_body> put_body::open(const std::optional<std::string>& file, std::string& error) {
  if (!file || *file == "-") return from_stdin(error);
  std::error_code ec;
  const auto status = std::filesystem::status(*file, ec);
  if (ec) {
    error = "--file: cannot open '" + *file + "': " + ec.message();
    return std::nullopt;
  }
  if (!std::filesystem::is_regular_file(status)) {
    error = "--file: '" + *file + "' is " +
            (std::filesystem::is_directory(status) ? "a directory" : "not a regular file") +
            "; give a regular file, or - for stdin";
    return std::nullopt;
  }
  if (::access(file->c_str(), R_OK) != 0) {
    error = "--file: cannot open '" + *file + "': " + std::strerror(errno);
    return std::nullopt;
  }
  put_body body;
  body.file_ = *file;
  return body;
}

std::optional<put_body> put_body::from_stdin(std::string& error) {
  put_body body;
  // One byte more than the memory bound tells whether stdin goes on.
  if (!read_stdin(body.bytes_, put_body_memory_bytes + 1)) {
    error = "cannot read stdin";
    return std::nullopt;
  }
  if (body.bytes_.size() <= put_body_memory_bytes) return body;
  std::string path = temporary_directory() + "/s3lect-put-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    error = "cannot spool stdin to " + path + ": " + std::strerror(errno) +
            " (set TMPDIR, or give --file)";
    return std::nullopt;
  }
  body.file_ = path;
  body.spooled_ = true;
  bool ok = true;
  while (ok && !body.bytes_.empty()) {
    ok = write_all(fd, body.bytes_);
    body.bytes_.clear();
    ok = ok && read_stdin(body.bytes_, put_body_memory_bytes);
  }
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    error = "cannot spool stdin to " + path + ": " + std::strerror(errno);
    return std::nullopt;  // the destructor removes the file
  }
  return body;
}

put_body::put_body(put_body&& other) noexcept
    : bytes_(std::move(other.bytes_)),
      file_(std::move(other.file_)),
      spooled_(std::exchange(other.spooled_, false)) {}

put_body::~put_body() {
  if (spooled_ && file_) ::unlink(file_->c_str());
}

}  // namespace s3lect::cli
