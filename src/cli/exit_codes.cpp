#include "cli/exit_codes.hpp"

#include <s3lect/error.hpp>

namespace s3lect::cli {

std::string exit_code_table() {
  return "exit codes (the same for every command):\n"
         "  0    success (check: the store is safe; run: stopped by SIGINT/SIGTERM)\n"
         "  1    unexpected internal failure (a bug: please report it)\n"
         "  2    bad arguments or configuration, including a file that cannot be read\n"
         "       (--ca-file, --file, --peer-cert, ...)\n"
         "  3    no lock record (status, release) or no object (get)\n"
         "  4    the store is unreachable, refused the request (network, TLS, credentials,\n"
         "       bucket) or does not answer like S3\n"
         "  5    the store does not honour conditional writes (check)\n"
         "  6    the record's term is not the one given with --if-term (release)\n"
         "  7    the lock record or fenced object cannot be parsed (status, release, get)\n"
         "  8    the record changed between reading and writing it (release)\n"
         "  9    the --peer-listen or --metrics-listen address cannot be bound (run)\n"
         "  10   fenced out: a higher term has written the object, nothing written (put)\n"
         "  11   not elected within --timeout (run)\n"
         "  126  the command is not an executable file (run)\n"
         "  127  the command was not found (run)\n"
         "  run: otherwise the command's own exit status (128+N if killed by signal N)\n";
}

int exit_code_for_store_error(const boost::system::error_code& error) {
  if (error == errc::malformed_record) return exit_malformed_record;
  if (error == errc::fenced_out) return exit_fenced_out;
  if (error == errc::invalid_config) return exit_usage;
  return exit_store_error;
}

}  // namespace s3lect::cli
