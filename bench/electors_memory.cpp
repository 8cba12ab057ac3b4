// Memory and CPU of many electors in one process, each on its own lock key (or K per key), all
// on one io_context thread sharing one storage: an s3lect::memory_store (no network: the
// electors' own cost) or a real S3 endpoint through one s3_client.
//
// usage: bench_electors_memory [--store memory|s3] [--electors N] [--per-key K]
//                              [--ramp S] [--settle S] [--duration S] [--pool N]
//                              [--bucket B] [--ca-file PATH] [--prefix P]
//   --store memory   (default) one memory_storage view of a memory_store
//   --store s3       one s3_client: endpoint, region and keys from the environment
//                    (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
//   --electors N     electors (default 10000)
//   --per-key K      electors per lock key (default 1: every elector leads its own key)
//   --ramp S         start the electors evenly over S seconds (default 5 = one renewal
//                    interval, so that renewals spread out as they would across processes)
//   --settle S       then wait S seconds before measuring (default 10)
//   --duration S     measure over S seconds (default 60)
//   --pool N         s3_config::max_idle_connections (default: the library's, 4)
// Default elector timings (lease 15 s, renew every 5 s, infrequent 30 s). Prints one table;
// exits 1 if not every key has a leader at the end.
#include <s3lect/elector.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/io_context.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using std::chrono::duration;
using std::chrono::steady_clock;

struct options {
  std::string store = "memory";
  int electors = 10000;
  int per_key = 1;
  double ramp_s = 5;
  double settle_s = 10;
  double duration_s = 60;
  std::optional<std::size_t> pool;
  std::string bucket;
  std::string ca_file;
  std::string prefix = "bench/electors";
};

[[noreturn]] void usage() {
  std::cerr << "usage: bench_electors_memory [--store memory|s3] [--electors N] [--per-key K]\n"
               "  [--ramp S] [--settle S] [--duration S] [--pool N] [--bucket B]\n"
               "  [--ca-file PATH] [--prefix P]\n";
  std::exit(2);
}

options parse(int argc, char** argv) {
  options opts;
  if (const char* bucket = std::getenv("S3LECT_TEST_BUCKET")) opts.bucket = bucket;
  if (const char* ca = std::getenv("S3LECT_TEST_CA_FILE")) opts.ca_file = ca;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--store")
      opts.store = value;
    else if (arg == "--electors")
      opts.electors = std::stoi(value);
    else if (arg == "--per-key")
      opts.per_key = std::stoi(value);
    else if (arg == "--ramp")
      opts.ramp_s = std::stod(value);
    else if (arg == "--settle")
      opts.settle_s = std::stod(value);
    else if (arg == "--duration")
      opts.duration_s = std::stod(value);
    else if (arg == "--pool")
      opts.pool = std::stoul(value);
    else if (arg == "--bucket")
      opts.bucket = value;
    else if (arg == "--ca-file")
      opts.ca_file = value;
    else if (arg == "--prefix")
      opts.prefix = value;
    else
      usage();
  }
  if (opts.store != "memory" && opts.store != "s3") usage();
  if (opts.electors < 1 || opts.per_key < 1 || opts.duration_s <= 0) usage();
  if (opts.store == "s3" && opts.bucket.empty()) {
    std::cerr << "error: --store s3 needs --bucket (or S3LECT_TEST_BUCKET)\n";
    std::exit(2);
  }
  return opts;
}

/// A field of /proc/self/status in kB ("VmRSS", "VmHWM").
long proc_status_kb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::size_t length = std::strlen(field);
  while (std::getline(status, line))
    if (line.compare(0, length, field) == 0 && line.size() > length && line[length] == ':')
      return std::strtol(line.c_str() + length + 1, nullptr, 10);
  return -1;
}

/// User plus system CPU time of this process.
duration<double> cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
  return duration<double>(seconds(usage.ru_utime) + seconds(usage.ru_stime));
}

struct totals {
  std::uint64_t gets = 0, puts = 0, failed = 0, renewals = 0, acquisitions = 0, losses = 0,
                demotions = 0;
  int leaders = 0;
};

totals sum(const std::vector<std::unique_ptr<s3lect::elector>>& electors) {
  totals t;
  for (const auto& e : electors) {
    const s3lect::elector_counters c = e->counters();
    t.gets += c.s3_get.total();
    t.puts += c.s3_put.total();
    t.failed += c.s3_get.failed + c.s3_put.failed;
    t.renewals += c.renewals;
    t.acquisitions += c.acquisitions;
    t.losses += c.losses;
    t.demotions += c.demotions;
    t.leaders += e->is_leader() ? 1 : 0;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse(argc, argv);
  boost::asio::io_context io(1);
  const long rss_empty_kb = proc_status_kb("VmRSS");

  std::unique_ptr<s3lect::storage> store;
  const s3lect::s3_client* client = nullptr;  // when --store s3
  std::string store_name;
  if (opts.store == "memory") {
    store = std::make_unique<s3lect::memory_storage>(io.get_executor(),
                                                     std::make_shared<s3lect::memory_store>());
    store_name = "memory_store (one memory_storage view)";
  } else {
    s3lect::s3_config config;
    config.bucket = opts.bucket;
    config.addressing = s3lect::addressing_style::path;
    config.tls.ca_file = opts.ca_file;
    if (opts.pool) config.max_idle_connections = *opts.pool;
    auto s3 = std::make_unique<s3lect::s3_client>(io.get_executor(), config);
    store_name = "s3_client " + s3->config().endpoint + " (max_idle_connections " +
                 std::to_string(s3->config().max_idle_connections) + ")";
    client = s3.get();
    store = std::move(s3);
  }
  const long rss_store_kb = proc_status_kb("VmRSS");

  // A fresh prefix per run: no record of an earlier run is in the way.
  const std::string run_prefix =
      opts.prefix + "/run-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "/";
  std::vector<std::unique_ptr<s3lect::elector>> electors;
  electors.reserve(static_cast<std::size_t>(opts.electors));
  const auto ramp = duration<double>(opts.ramp_s);
  const auto start = steady_clock::now();
  for (int i = 0; i < opts.electors; ++i) {
    s3lect::elector_config config;
    config.lock_key = run_prefix + std::to_string(i / opts.per_key) + ".json";
    config.server_id = "elector-" + std::to_string(i);
    electors.push_back(std::make_unique<s3lect::elector>(io.get_executor(), *store, config));
    electors.back()->start();
    // Run the io_context until this elector's place in the ramp.
    const auto due = start + std::chrono::duration_cast<steady_clock::duration>(
                                 ramp * (double(i + 1) / opts.electors));
    if (steady_clock::now() < due) io.run_until(due);
  }
  const long rss_started_kb = proc_status_kb("VmRSS");
  io.run_for(std::chrono::duration_cast<steady_clock::duration>(duration<double>(opts.settle_s)));

  const totals before = sum(electors);
  const std::uint64_t connections_before = client ? client->stats().connections : 0;
  const auto cpu_before = cpu_time();
  const auto wall_before = steady_clock::now();
  io.run_for(std::chrono::duration_cast<steady_clock::duration>(duration<double>(opts.duration_s)));
  const auto cpu_used = cpu_time() - cpu_before;
  const duration<double> wall = steady_clock::now() - wall_before;
  const totals after = sum(electors);
  const std::uint64_t connections = client ? client->stats().connections - connections_before : 0;
  const long rss_kb = proc_status_kb("VmRSS");
  const long hwm_kb = proc_status_kb("VmHWM");

  const int keys = (opts.electors + opts.per_key - 1) / opts.per_key;
  const double n = opts.electors;
  const double requests = double(after.gets + after.puts - before.gets - before.puts);
  std::printf(
      "electors: %d on %d keys (%d per key), default timings (lease 15 s, renew 5 s, "
      "infrequent 30 s)\n",
      opts.electors, keys, opts.per_key);
  std::printf(
      "store: %s; one io_context thread; started over %.1f s, settled %.1f s, "
      "measured over %.1f s\n\n",
      store_name.c_str(), opts.ramp_s, opts.settle_s, wall.count());
  std::printf("| %-44s | %14s |\n", "measure", "value");
  std::printf("|%s|%s|\n", std::string(46, '-').c_str(), std::string(16, '-').c_str());
  auto row = [](const char* name, const std::string& value) {
    std::printf("| %-44s | %14s |\n", name, value.c_str());
  };
  auto fmt = [](const char* format, double value) {
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return std::string(text);
  };
  row("VmRSS before the store (kB)", fmt("%.0f", double(rss_empty_kb)));
  row("VmRSS with the store, no elector (kB)", fmt("%.0f", double(rss_store_kb)));
  row("VmRSS after starting all (kB)", fmt("%.0f", double(rss_started_kb)));
  row("VmRSS at the end (kB)", fmt("%.0f", double(rss_kb)));
  row("VmHWM (peak RSS, kB)", fmt("%.0f", double(hwm_kb)));
  row("RSS per elector (end - store, bytes)",
      fmt("%.0f", double(rss_kb - rss_store_kb) * 1024 / n));
  row("CPU (user+sys) in the window (s)", fmt("%.3f", cpu_used.count()));
  row("CPU, % of one core", fmt("%.2f", 100 * cpu_used.count() / wall.count()));
  row("CPU per elector per hour (ms)",
      fmt("%.2f", 1000 * cpu_used.count() / n * 3600 / wall.count()));
  row("storage requests per second", fmt("%.1f", requests / wall.count()));
  row("CPU per storage request (us)",
      fmt("%.1f", requests > 0 ? 1e6 * cpu_used.count() / requests : 0));
  if (client) {
    row("TCP+TLS connections opened in the window", fmt("%.0f", double(connections)));
    row("connections opened per request", fmt("%.3f", requests > 0 ? connections / requests : 0));
  }
  row("failed requests in the window", fmt("%.0f", double(after.failed - before.failed)));
  row("leaders at the end", fmt("%.0f", double(after.leaders)));
  row("keys without a leader at the end", fmt("%.0f", double(keys - after.leaders)));
  row("losses (demotions) in the window",
      fmt("%.0f", double(after.losses - before.losses)) + " (" +
          fmt("%.0f", double(after.demotions - before.demotions)) + ")");
  std::fflush(stdout);

  // Hand over cleanly: every leader releases its key (bounded, so a slow store cannot hang us).
  int stopped = 0;
  for (auto& e : electors) e->async_stop([&stopped](boost::system::error_code) { ++stopped; });
  const auto give_up = steady_clock::now() + 30s;
  while (stopped < opts.electors && steady_clock::now() < give_up) io.run_one_for(100ms);
  electors.clear();
  return after.leaders == keys ? 0 : 1;
}
