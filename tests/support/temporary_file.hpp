// A file with given contents in the temporary directory, removed again when the object goes:
// for settings that take a path (certificates, keys, CA bundles).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace s3lect::test {

class temporary_file {
 public:
  explicit temporary_file(const std::string& contents)
      : path_(std::filesystem::temp_directory_path() /
              ("s3lect-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
    std::ofstream(path_) << contents;
  }
  ~temporary_file() { std::filesystem::remove(path_); }
  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;

  std::string path() const { return path_.string(); }

 private:
  static inline int next_ = 0;
  std::filesystem::path path_;
};

}  // namespace s3lect::test
