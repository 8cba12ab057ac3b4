// The cost of one fenced write against a plain conditional PUT, on a real store: requests sent
// and milliseconds per write, both measured in the same run, the fenced figure also printed as a
// ratio to the plain one (docs/performance.md). Uncontended: one writer, one key each.
//
// usage: bench_fenced_write ENDPOINT BUCKET [WRITES]   (credentials from AWS_ACCESS_KEY_ID, ...)
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

namespace asio = boost::asio;
using steady = std::chrono::steady_clock;

namespace {

struct series {
  std::vector<double> ms;
  std::uint64_t requests = 0;
  double median() {
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0 : ms[ms.size() / 2];
  }
};

double ms_since(steady::time_point start) {
  return std::chrono::duration<double, std::milli>(steady::now() - start).count();
}

/// Plain conditional PUTs: each If-Match on the previous ETag, one request per write.
asio::awaitable<series> plain_puts(s3lect::s3_client& client, std::string key, int writes) {
  series result;
  const auto before = client.stats();
  auto [first_ec, first] = co_await client.async_put(key, "0", s3lect::put_condition::absent(),
                                                     asio::as_tuple(asio::use_awaitable));
  if (first_ec) throw boost::system::system_error(first_ec);
  std::string etag = first.etag;
  for (int i = 1; i <= writes; ++i) {
    const auto start = steady::now();
    const auto condition = s3lect::put_condition::matches(etag);
    auto [ec, put] = co_await client.async_put(key, "write " + std::to_string(i), condition,
                                               asio::as_tuple(asio::use_awaitable));
    if (ec) throw boost::system::system_error(ec);
    result.ms.push_back(ms_since(start));
    etag = put.etag;
  }
  const auto after = client.stats();
  result.requests = after.gets + after.puts - before.gets - before.puts - 1;
  co_return result;
}

/// Plain GETs of the key the plain PUTs wrote: the other half of a fenced write.
asio::awaitable<series> plain_gets(s3lect::s3_client& client, std::string key, int reads) {
  series result;
  for (int i = 0; i < reads; ++i) {
    const auto start = steady::now();
    auto [ec, got] = co_await client.async_get(key, asio::as_tuple(asio::use_awaitable));
    if (ec) throw boost::system::system_error(ec);
    result.ms.push_back(ms_since(start));
    ++result.requests;
  }
  co_return result;
}

/// Fenced writes with one term: each a GET and a conditional PUT.
asio::awaitable<series> fenced_writes(s3lect::s3_client& client, std::string key, int writes) {
  series result;
  s3lect::fenced_object target(client, key);
  auto [first_ec, first] = co_await target.async_write(1, "0", asio::as_tuple(asio::use_awaitable));
  if (first_ec) throw boost::system::system_error(first_ec);
  const auto before = client.stats();
  for (int i = 1; i <= writes; ++i) {
    const auto start = steady::now();
    auto [ec, written] = co_await target.async_write(1, "write " + std::to_string(i),
                                                     asio::as_tuple(asio::use_awaitable));
    if (ec) throw boost::system::system_error(ec);
    result.ms.push_back(ms_since(start));
  }
  const auto after = client.stats();
  result.requests = after.gets + after.puts - before.gets - before.puts;
  co_return result;
}

asio::awaitable<void> measure(s3lect::s3_client& client, int writes) {
  std::random_device random;
  const std::string run = std::to_string(random());
  // Alternating rounds, so that a slow spell of the store hits both alike.
  series plain;
  series fenced;
  series get;
  for (int round = 0; round < 4; ++round) {
    const std::string suffix = run + "-" + std::to_string(round);
    series p = co_await plain_puts(client, "bench/plain-" + suffix, writes / 4);
    series g = co_await plain_gets(client, "bench/plain-" + suffix, writes / 4);
    series f = co_await fenced_writes(client, "bench/fenced-" + suffix, writes / 4);
    get.ms.insert(get.ms.end(), g.ms.begin(), g.ms.end());
    plain.ms.insert(plain.ms.end(), p.ms.begin(), p.ms.end());
    fenced.ms.insert(fenced.ms.end(), f.ms.begin(), f.ms.end());
    plain.requests += p.requests;
    fenced.requests += f.requests;
  }
  const double plain_ms = plain.median();
  const double fenced_ms = fenced.median();
  std::printf("plain conditional PUT: %.2f requests/write, median %.2f ms (baseline)\n",
              static_cast<double>(plain.requests) / static_cast<double>(plain.ms.size()), plain_ms);
  std::printf("plain GET:             1.00 requests/read,  median %.2f ms\n", get.median());
  std::printf("fenced write:          %.2f requests/write, median %.2f ms, %.2fx the baseline\n",
              static_cast<double>(fenced.requests) / static_cast<double>(fenced.ms.size()),
              fenced_ms, fenced_ms / plain_ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_fenced_write ENDPOINT BUCKET [WRITES]\n");
    return 2;
  }
  s3lect::s3_config config;
  config.endpoint = argv[1];
  config.bucket = argv[2];
  config.addressing = s3lect::addressing_style::path;
  const int writes = argc > 3 ? std::max(4, std::stoi(argv[3])) : 200;
  asio::io_context io;
  s3lect::s3_client client(io.get_executor(), config);
  int status = 0;
  asio::co_spawn(io, measure(client, writes), [&](std::exception_ptr error) {
    if (!error) return;
    status = 1;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_fenced_write: %s\n", e.what());
    }
  });
  io.run();
  return status;
}
