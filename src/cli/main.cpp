// The s3lect command-line tool: subcommand dispatch and the top-level help.
#include "cli/check.hpp"
#include "cli/exit_codes.hpp"

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

const char* top_help() {
  return "usage: s3lect COMMAND [options]\n"
         "Leader election on S3 conditional writes.\n"
         "\n"
         "commands:\n"
         "  check    probe whether a store honours the conditional writes s3lect needs\n"
         "\n"
         "`s3lect COMMAND --help` describes a command's options.\n"
         "\n"
         "exit codes:\n"
         "  0  success (check: the store is safe)\n"
         "  1  unexpected internal failure\n"
         "  2  bad arguments or configuration\n"
         "  3  no lock record (status)\n"
         "  4  the store is unreachable or refused the request (network, TLS, credentials)\n"
         "  5  the store does not honour conditional writes (check)\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace s3lect::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << top_help();
    return args.empty() ? exit_usage : exit_ok;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "check") return run_check(args);
  } catch (const std::exception& e) {
    std::cerr << "s3lect " << command << ": " << e.what() << "\n";
    return exit_failure;
  }
  std::cerr << "s3lect: unknown command '" << command << "' (try s3lect --help)\n";
  return exit_usage;
}
