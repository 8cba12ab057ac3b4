#include "cli/put.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock_reader.hpp"
#include "cli/object_target.hpp"
#include "cli/put_body.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/store_client.hpp"

#include "base/log_text.hpp"

#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <optional>
#include <tuple>

namespace s3lect::cli {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

struct put_outcome {
  int exit_code = exit_ok;
  std::string message;  ///< One line for stderr (or stdout on success).
};

/// --term, else $S3LECT_TERM (set by `s3lect run` for its command).
std::optional<std::uint64_t> chosen_term(const parsed_args& args, std::string& error) {
  std::optional<std::string> text = args.get("term");
  std::string origin = "--term";
  if (!text) {
    if (const char* exported = std::getenv("S3LECT_TERM"); exported && *exported) text = exported;
    origin = "$S3LECT_TERM";
  }
  if (!text) {
    error = "no term: give --term T or run under `s3lect run`, which exports S3LECT_TERM";
    return std::nullopt;
  }
  return parse_term(origin, *text, error);
}

/// Writes from `file` (streamed) when set, else `bytes`.
asio::awaitable<std::tuple<error_code, fenced_write_result>> write_body(
    fenced_object& target, std::uint64_t term, std::optional<std::string> file, std::string bytes) {
  if (file) {
    co_return co_await target.async_write_file(term, std::move(*file),
                                               asio::as_tuple(asio::use_awaitable));
  }
  co_return co_await target.async_write(term, std::move(bytes),
                                        asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<put_outcome> put(storage& store, std::string key, std::string url,
                                 std::uint64_t term, std::optional<std::string> file,
                                 std::string bytes) {
  fenced_object target(store, std::move(key));
  auto [ec, result] = co_await write_body(target, term, std::move(file), std::move(bytes));
  put_outcome outcome;
  if (!ec) {
    outcome.message = "wrote " + url + " with term " + std::to_string(term);
  } else if (ec == errc::fenced_out) {
    outcome.exit_code = exit_fenced_out;
    outcome.message = "fenced out: " + url + " was written with term " +
                      std::to_string(result.stored_term) + ", above ours (" + std::to_string(term) +
                      "); nothing written";
  } else {
    outcome.exit_code = exit_code_for_store_error(ec);
    outcome.message = "cannot write " + url + ": " + describe_object_error(ec, result.info);
  }
  co_return outcome;
}

}  // namespace

std::string put_help() {
  return "usage: s3lect put [--term T] [--file PATH] [options] "
         "s3://BUCKET/KEY|az://CONTAINER/BLOB\n"
         "Writes the object fenced by a leadership term: refused once a higher term has\n"
         "written it, so a leader that lost its lease cannot overwrite its successor's work.\n"
         "The body is read from stdin (or --file) and streamed: any size S3 takes in one\n"
         "PUT (5 GiB); on az://, larger bodies go in blocks committed at once. Stdin over\n"
         "1 MiB is spooled to a file in $TMPDIR (else /tmp) first,\n"
         "since the length must be known. The term and a one-line envelope are stored\n"
         "with the object; read it back with `s3lect get`.\n"
         "\n"
         "options:\n"
         "  --term T                 the writer's term (default: $S3LECT_TERM, which\n"
         "                           `s3lect run` exports to its command)\n"
         "  --file PATH              read the body from the regular file PATH (- for\n"
         "                           stdin) instead of stdin\n" +
         object_store_options_help() +
         "  --help                   print this help\n"
         "\n" +
         exit_code_table();
}

int run_put(const std::vector<std::string>& args) {
  bool help = false;
  std::string error;
  auto command = parse_object_command(args, {}, {"term", "file"}, help, error);
  if (help) {
    print_out(put_help());
    return exit_ok;
  }
  std::optional<std::uint64_t> term;
  if (command) term = chosen_term(command->args, error);
  std::optional<put_body> body =
      term ? put_body::open(command->args.get("file"), error) : std::nullopt;
  if (!body) {
    print_err("s3lect put: " + error + "\n");
    return exit_usage;
  }
  asio::io_context io;
  store_client client(io.get_executor(), command->target);
  const put_outcome outcome =
      run_to_completion(io, put(client, command->target.key, log_text::value(command->target.url()),
                                *term, body->file(), body->take_bytes()));
  print_err("s3lect put: " + outcome.message + "\n");
  return outcome.exit_code;
}

}  // namespace s3lect::cli
