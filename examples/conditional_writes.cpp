// The primitive under s3lect, shown on a real store: a lock record created with
// create-if-absent, renewed with If-Match, and a second contender losing both races.
//
// Reads the store from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...) and the
// bucket and key from its arguments: conditional_writes BUCKET KEY [CA_FILE]
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>
#include <random>
#include <string>

namespace asio = boost::asio;

namespace {

std::string record(const std::string& leader, int renewal) {
  // Every write carries a fresh nonce: identical bodies would have identical ETags.
  static std::mt19937_64 random{std::random_device{}()};
  return R"({"leaderID":")" + leader + R"(","renewal":)" + std::to_string(renewal) +
         R"(,"nonce":")" + std::to_string(random()) + "\"}";
}

asio::awaitable<int> demo(s3lect::s3_client& alice, s3lect::s3_client& bob, std::string key) {
  auto absent = s3lect::put_condition::absent();
  auto alice_body = record("alice", 0);
  auto [created_ec, created] =
      co_await alice.async_put(key, alice_body, absent, asio::as_tuple(asio::use_awaitable));
  if (created_ec) {
    std::cout << "alice could not create the lock: " << created_ec.message() << "\n";
    co_return 1;
  }
  std::cout << "alice created " << key << " with If-None-Match: *   -> ETag " << created.etag
            << "\n";

  auto bob_body = record("bob", 0);
  auto [bob_create_ec, bob_create] =
      co_await bob.async_put(key, bob_body, absent, asio::as_tuple(asio::use_awaitable));
  std::cout << "bob tries If-None-Match: * too           -> "
            << (bob_create_ec ? bob_create_ec.message() : std::string("WON (store unsafe!)"))
            << "\n";

  auto current = s3lect::put_condition::matches(created.etag);
  auto renewal_body = record("alice", 1);
  auto [renew_ec, renewed] =
      co_await alice.async_put(key, renewal_body, current, asio::as_tuple(asio::use_awaitable));
  if (renew_ec) {
    std::cout << "alice could not renew: " << renew_ec.message() << "\n";
    co_return 1;
  }
  std::cout << "alice renews with If-Match: " << created.etag << " -> ETag " << renewed.etag
            << "\n";

  auto stale_body = record("bob", 1);
  auto [stale_ec, stale] =
      co_await bob.async_put(key, stale_body, current, asio::as_tuple(asio::use_awaitable));
  std::cout << "bob tries the stale ETag " << created.etag << " -> "
            << (stale_ec ? stale_ec.message() : std::string("WON (store unsafe!)")) << "\n";

  co_await alice.async_delete(key, asio::as_tuple(asio::use_awaitable));
  const bool safe = bob_create_ec == s3lect::errc::precondition_failed &&
                    stale_ec == s3lect::errc::precondition_failed;
  std::cout << (safe ? "one lock holder, as it must be\n" : "the store is not safe!\n");
  co_return safe ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: conditional_writes BUCKET KEY [CA_FILE]\n";
    return 2;
  }
  s3lect::s3_config config;
  config.bucket = argv[1];
  config.addressing = s3lect::addressing_style::path;
  if (argc > 3) config.tls.ca_file = argv[3];
  std::string key = std::string(argv[2]) + "-" + std::to_string(std::random_device{}());

  asio::io_context io;
  s3lect::s3_client alice(io.get_executor(), config);
  s3lect::s3_client bob(io.get_executor(), config);
  int status = 1;
  asio::co_spawn(io, demo(alice, bob, key), [&status](std::exception_ptr e, int result) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << "\n";
      }
    } else {
      status = result;
    }
  });
  io.run();
  return status;
}
