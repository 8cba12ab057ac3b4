// A leader appending to a shared S3 object, fenced by its term (docs/safety-and-fencing.md):
//
//   auto lease = co_await elector.async_wait_for_leadership();
//   co_await log.async_update(lease.term, append(line));   // refused once a newer term wrote
//
// The run: this node is elected and appends three lines with its term. Then a successor, as a
// node elected after this one would, appends with the next term, and this node, now a zombie
// that has not noticed, tries to append once more: the write is refused with fenced_out and
// the object keeps the successor's line last.
//
// The store comes from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
// usage: fenced_append BUCKET KEY [CA_FILE]   (KEY/lock for the lock, KEY/log for the object)
// Exit status: 0 when the zombie was fenced out, 1 otherwise.
#include <s3lect/elector.hpp>
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

namespace asio = boost::asio;

namespace {

/// The update that appends `line` to whatever the object holds now.
s3lect::fenced_update append(std::string line) {
  return [line](const std::optional<s3lect::fenced_version>& current) {
    return (current ? current->body : std::string()) + line + "\n";
  };
}

/// Appends `line` with `term`; prints and returns the outcome.
asio::awaitable<boost::system::error_code> append_line(s3lect::fenced_object& log,
                                                       std::uint64_t term, std::string line) {
  auto [ec, written] =
      co_await log.async_update(term, append(line), asio::as_tuple(asio::use_awaitable));
  if (!ec) {
    std::cout << "appended term=" << term << " '" << line << "'\n";
  } else if (ec == s3lect::errc::fenced_out) {
    std::cout << "fenced out: term " << term << " refused, the object has term "
              << written.stored_term << "\n";
  } else {
    std::cout << "append failed: " << ec.message() << " " << written.info.message << "\n";
  }
  co_return ec;
}

asio::awaitable<int> run(s3lect::elector& elector, s3lect::storage& store, std::string key) {
  const auto lease = co_await elector.async_wait_for_leadership();
  std::cout << "leader term=" << lease.term << "\n";
  s3lect::fenced_object log(store, key);
  for (int line = 1; line <= 3; ++line) {
    if (co_await append_line(log, lease.term, "line " + std::to_string(line))) co_return 1;
  }
  // The successor: another writer of the same object with the next term.
  s3lect::fenced_object successor(store, key);
  if (co_await append_line(successor, lease.term + 1, "successor's line")) co_return 1;
  // This node again, a zombie with the old term.
  const auto zombie = co_await append_line(log, lease.term, "zombie's line");
  co_await elector.async_stop();
  auto [read_ec, final_state] = co_await log.async_read(asio::as_tuple(asio::use_awaitable));
  if (read_ec || !final_state.found) co_return 1;
  std::cout << "object at term " << final_state.found->term << ":\n" << final_state.found->body;
  co_return zombie == s3lect::errc::fenced_out ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: fenced_append BUCKET KEY [CA_FILE]\n";
    return 2;
  }
  s3lect::s3_config store_config;
  store_config.bucket = argv[1];
  store_config.addressing = s3lect::addressing_style::path;
  if (argc > 3) store_config.tls.ca_file = argv[3];
  s3lect::elector_config config;
  config.lock_key = std::string(argv[2]) + "/lock";
  config.server_id = "fenced-append";

  asio::io_context io;
  s3lect::s3_client store(io.get_executor(), store_config);
  s3lect::elector elector(io.get_executor(), store, config);
  elector.start();
  int status = 1;
  asio::co_spawn(io, run(elector, store, std::string(argv[2]) + "/log"),
                 [&](std::exception_ptr error, int result) {
                   status = error ? 1 : result;
                   io.stop();
                 });
  io.run();
  return status;
}
