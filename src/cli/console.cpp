#include "cli/console.hpp"

#include <cstdio>

namespace s3lect::cli {

void print_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void print_err(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace s3lect::cli
