// The s3lect command-line tool: subcommand dispatch and the top-level help.
#include "cli/check.hpp"
#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/get.hpp"
#include "cli/put.hpp"
#include "cli/release.hpp"
#include "cli/run.hpp"
#include "cli/status.hpp"
#include "supervision/guardian_release.hpp"

#include <s3lect/core_dumps.hpp>
#include <s3lect/error.hpp>
#include <s3lect/version.hpp>

#include <boost/system/system_error.hpp>

#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string top_help() {
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
         "\n" +
         s3lect::cli::exit_code_table();
}

/// A configuration the library refused as it built a client (an unreadable or non-PEM CA file),
/// named by the option the user gave: "tls.ca_file: cannot load 'x': …: invalid configuration
/// [s3lect:20]" becomes "--ca-file: cannot load 'x': …".
std::string configuration_error(const boost::system::system_error& error) {
  std::string what = error.what();
  what = what.substr(0, what.rfind(": " + error.code().message()));
  constexpr std::string_view store_ca_field = "tls.ca_file:";
  if (what.starts_with(store_ca_field)) what = "--ca-file:" + what.substr(store_ca_field.size());
  return what;
}

/// `-h` before `--` asks for help as `--help` does (after `--` it is the command's).
void accept_short_help(std::vector<std::string>& args) {
  for (auto& arg : args) {
    if (arg == "--") return;
    if (arg == "-h") arg = "--help";
  }
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
    print_out("s3lect " S3LECT_VERSION_STRING "\n");
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
  accept_short_help(args);
  try {
    if (command == "check") return run_check(args);
    if (command == "run") return run_run(args);
    if (command == "status") return run_status(args);
    if (command == "release") return run_release(args);
    if (command == "put") return run_put(args);
    if (command == "get") return run_get(args);
    if (command == "__guardian-release") return run_guardian_release(args);
  } catch (const boost::system::system_error& e) {
    const bool configuration = e.code() == s3lect::errc::invalid_config;
    print_err("s3lect " + command + ": " + (configuration ? configuration_error(e) : e.what()) +
              "\n");
    return configuration ? exit_usage : exit_failure;
  } catch (const std::exception& e) {
    print_err("s3lect " + command + ": " + e.what() + "\n");
    return exit_failure;
  }
  print_err("s3lect: unknown command '" + command + "' (try s3lect --help)\n");
  return exit_usage;
}
