#include "cli/get.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock_reader.hpp"
#include "cli/object_target.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/store_client.hpp"

#include "base/log_text.hpp"

#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string_view>

namespace s3lect::cli {

namespace asio = boost::asio;

namespace {

/// Writes a chunk of the body to stdout; a failed write (a closed pipe, a full disk) stops
/// the read.
boost::system::error_code write_stdout(std::string_view chunk) {
  if (std::fwrite(chunk.data(), 1, chunk.size(), stdout) == chunk.size()) return {};
  return {errno ? errno : EIO, boost::system::generic_category()};
}

/// Reads the object, streaming its body to stdout.
asio::awaitable<std::tuple<boost::system::error_code, fenced_read_result>> get(storage& store,
                                                                               std::string key) {
  fenced_object target(store, std::move(key));
  co_return co_await target.async_read_to(write_stdout, asio::as_tuple(asio::use_awaitable));
}

}  // namespace

std::string get_help() {
  return "usage: s3lect get [--term-file PATH] [options] s3://BUCKET/KEY|az://CONTAINER/BLOB\n"
         "Reads an object written by `s3lect put`: its body to stdout, streamed (any size),\n"
         "then its term to stderr as `term N` (or to --term-file). An object no fenced\n"
         "write wrote has term 0. After a failure part of the body may have been written.\n"
         "\n"
         "options:\n"
         "  --term-file PATH         write the term (digits and a newline) to PATH instead\n" +
         object_store_options_help() +
         "  --help                   print this help\n"
         "\n" +
         exit_code_table();
}

int run_get(const std::vector<std::string>& args) {
  bool help = false;
  std::string error;
  auto command = parse_object_command(args, {}, {"term-file"}, help, error);
  if (help) {
    print_out(get_help());
    return exit_ok;
  }
  if (!command) {
    print_err("s3lect get: " + error + "\n");
    return exit_usage;
  }
  asio::io_context io;
  store_client client(io.get_executor(), command->target);
  const auto [ec, read] = run_to_completion(io, get(client, command->target.key));
  const bool flushed = std::fflush(stdout) == 0;
  const std::string url = log_text::value(command->target.url());
  if (ec) {
    print_err("s3lect get: cannot read " + url + ": " + describe_object_error(ec, read.info) +
              "\n");
    return exit_code_for_store_error(ec);
  }
  if (!flushed) {
    print_err("s3lect get: cannot write the body of " + url + " to stdout\n");
    return exit_failure;
  }
  if (!read.found) {
    print_err("s3lect get: no object at " + url + "\n");
    return exit_no_record;
  }
  const std::string term = std::to_string(read.found->term);
  if (const auto path = command->args.get("term-file")) {
    std::ofstream file(*path, std::ios::trunc);
    if (!(file << term << '\n')) {
      print_err("s3lect get: --term-file: cannot write '" + *path + "'\n");
      return exit_usage;
    }
  } else {
    print_err("term " + term + "\n");
  }
  return exit_ok;
}

}  // namespace s3lect::cli
