// The command lines of the chaos tools: `--name value` pairs, and --help.
#pragma once

#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace s3lect::chaos {

/// Calls `take(name, value)` for each `--name value` pair of the command line, in order.
/// Returns false after printing `usage` when asked for --help (-h); throws
/// std::invalid_argument for a name without a value. `take` throws for a name it does not know.
template <class Take>
bool read_option_pairs(int argc, char** argv, std::string_view usage, Take take) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--help" || name == "-h") {
      std::cout << usage;
      return false;
    }
    if (i + 1 >= argc) throw std::invalid_argument(name + " needs a value");
    take(name, std::string(argv[++i]));
  }
  return true;
}

}  // namespace s3lect::chaos
