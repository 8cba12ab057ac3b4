// The s3lect command-line tool: subcommand dispatch and the top-level help.
#include "cli/check.hpp"
#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/get.hpp"
#include "cli/guardian_release.hpp"
#include "cli/put.hpp"
#include "cli/release.hpp"
#include "cli/run.hpp"
#include "cli/status.hpp"

#include <s3lect/core_dumps.hpp>

#include <exception>
#include <string>
#include <vector>

namespace {

const char* top_help() {
  return "usage: s3lect COMMAND [options]\n"
         "Leader election on S3 conditional writes.\n"
         "\n"
         "commands:\n"
         "  run      campaign for a lock and run a command only while leader\n"
         "  status   print the lock record as JSON (--watch: one line per change of leader)\n"
         "  release  force a handover: mark the lock record released\n"
         "  check    probe whether a store honours the conditional writes s3lect needs\n"
         "  put      write an object fenced by the leader's term (stdin, term $S3LECT_TERM)\n"
         "  get      read a fenced object: body to stdout, term to stderr\n"
         "\n"
         "`s3lect COMMAND --help` describes a command's options; `s3lect --version` prints\n"
         "the version.\n"
         "\n"
         "exit codes:\n"
         "  0    success (check: the store is safe; run: stopped by SIGINT/SIGTERM)\n"
         "  1    unexpected internal failure\n"
         "  2    bad arguments or configuration\n"
         "  3    no lock record (status, release)\n"
         "  4    the store is unreachable or refused the request (network, TLS, credentials)\n"
         "  5    the store does not honour conditional writes (check)\n"
         "  6    the record's term is not the one given with --if-term (release)\n"
         "  7    the lock record cannot be parsed (status, release)\n"
         "  8    the record changed between reading and writing it (release)\n"
         "  9    the --peer-listen or --metrics-listen address cannot be bound (run)\n"
         "  10   fenced out: a higher term has written the object (put)\n"
         "  11   not elected within --timeout (run)\n"
         "  126  the command is not an executable file (run)\n"
         "  127  the command was not found (run)\n"
         "  run:  otherwise the command's own exit status (128+N if killed by signal N)\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace s3lect::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_err(
        "usage: s3lect COMMAND [options], COMMAND one of run, status, release, check, put, get "
        "(try s3lect --help)\n");
    return exit_usage;
  }
  if (args[0] == "--version") {
    // S3LECT_VERSION: the project's version, defined by CMakeLists.txt.
    print_out(std::string("s3lect ") + S3LECT_VERSION + "\n");
    return exit_ok;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_out(top_help());
    return exit_ok;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  // Every command but run (which has --allow-core-dumps) may hold credentials: no core dump
  // holds them (docs/operations.md#core-dumps). A failure leaves the process as it was.
  if (command != "run") s3lect::exclude_from_core_dumps();
  try {
    if (command == "check") return run_check(args);
    if (command == "run") return run_run(args);
    if (command == "status") return run_status(args);
    if (command == "release") return run_release(args);
    if (command == "put") return run_put(args);
    if (command == "get") return run_get(args);
    if (command == "__guardian-release") return run_guardian_release(args);
  } catch (const std::exception& e) {
    print_err("s3lect " + command + ": " + e.what() + "\n");
    return exit_failure;
  }
  print_err("s3lect: unknown command '" + command + "' (try s3lect --help)\n");
  return exit_usage;
}
