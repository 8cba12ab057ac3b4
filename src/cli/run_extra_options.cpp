#include "cli/run_extra_options.hpp"

#include <charconv>

namespace s3lect::cli {

using std::chrono::milliseconds;

const std::vector<std::string>& run_extra_flag_names() {
  static const std::vector<std::string> names{"print-config", "pass-stdin", "allow-core-dumps"};
  return names;
}

const std::vector<std::string>& run_extra_valued_names() {
  static const std::vector<std::string> names{"timeout", "slots", "isolation"};
  return names;
}

const char* run_extra_options_help() {
  return "  --timeout DUR            give up when not leader within DUR of starting: stop\n"
         "                           campaigning and exit 11 (default: wait for ever)\n"
         "  --slots N                up to N leaders at once (a semaphore, 1-64): one lock per\n"
         "                           slot, KEY.slot-0 ... KEY.slot-N-1, each with its own term;\n"
         "                           a node holds at most one, and COMMAND gets S3LECT_SLOT\n"
         "                           (default: one lock, KEY)\n"
         "  --pass-stdin             COMMAND reads s3lect's stdin (default: /dev/null, since a\n"
         "                           command started again after a lost leadership could not\n"
         "                           read it again)\n"
         "  --isolation LEVEL        what keeps COMMAND's processes together besides its\n"
         "                           guardian (see above): auto (the strongest this system\n"
         "                           allows), guardian, pid-namespace, cgroup or\n"
         "                           pid-namespace,cgroup; any but auto is required: s3lect\n"
         "                           exits 2 at start-up when the system does not allow it\n"
         "                           (pid-namespace and cgroup are Linux only; default: auto)\n"
         "  --allow-core-dumps       leave s3lect dumpable: by default it is not (Linux:\n"
         "                           PR_SET_DUMPABLE 0), so that no core dump and no ptrace\n"
         "                           of another process of the user reads its credentials;\n"
         "                           COMMAND is dumpable either way, the guardian never\n"
         "  --print-config           print the effective settings, and which were derived, as\n"
         "                           options, then exit 0 (COMMAND may be omitted; default:\n"
         "                           campaign)\n";
}

std::optional<run_extras> read_run_extras(const parsed_args& args, std::string& error) {
  run_extras extras;
  extras.print_config = args.has("print-config");
  extras.pass_stdin = args.has("pass-stdin");
  extras.allow_core_dumps = args.has("allow-core-dumps");
  if (auto timeout = args.get("timeout")) {
    const auto parsed = parse_duration(*timeout);
    if (!parsed || *parsed <= milliseconds::zero()) {
      error =
          "--timeout: expected a duration greater than 0 such as 30s or 5m, got '" + *timeout + "'";
      return std::nullopt;
    }
    extras.timeout = *parsed;
  }
  if (auto slots = args.get("slots")) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(slots->data(), slots->data() + slots->size(), value);
    if (ec != std::errc{} || end != slots->data() + slots->size() || value < 1 ||
        value > max_slots) {
      error = "--slots: expected a number of leaders from 1 to " + std::to_string(max_slots) +
              ", got '" + *slots + "'";
      return std::nullopt;
    }
    extras.slots = value;
  }
  if (auto level = args.get("isolation"); level && *level != "auto") {
    extras.isolation = guardian::parse_isolation(*level);
    if (!extras.isolation) {
      error =
          "--isolation: expected auto, guardian, pid-namespace, cgroup or "
          "pid-namespace,cgroup, got '" +
          *level + "'";
      return std::nullopt;
    }
  }
  return extras;
}

std::string slot_key(const std::string& key, unsigned slot) {
  return key + ".slot-" + std::to_string(slot);
}

}  // namespace s3lect::cli
