// Helpers for CLI integration tests with several `s3lect run` nodes: free ports for their
// endpoints, and a journal their commands append to, so that a test sees when each leadership's
// command started and ended (and that no two ran at once).
#pragma once

#include "support/cli_harness.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace s3lect::test {

/// `count` distinct ports that were free a moment ago on 127.0.0.1 (the kernel's picks).
inline std::vector<unsigned short> free_ports(std::size_t count) {
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::acceptor> held;
  std::vector<unsigned short> ports;
  for (std::size_t i = 0; i < count; ++i) {
    held.emplace_back(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    ports.push_back(held.back().local_endpoint().port());
  }
  return ports;
}

inline unsigned short free_port() {
  return free_ports(1).front();
}

/// A command that appends "start TERM ID NS" and, on SIGTERM, "end TERM ID NS" to `file`.
inline std::string journaling_command(const std::string& file) {
  return "echo \"start $S3LECT_TERM $S3LECT_LEADER_ID $(date +%s%N)\" >> " + file +
         "; trap 'echo \"end $S3LECT_TERM $S3LECT_LEADER_ID $(date +%s%N)\" >> " + file +
         "; exit 0' TERM; while :; do sleep 0.05; done";
}

struct journal_entry {
  std::string kind;
  long long term = 0;
  std::string id;
  long long ns = 0;
};

inline std::vector<journal_entry> read_journal(const std::string& file) {
  std::vector<journal_entry> entries;
  for (const auto& line : lines_of(read_file(file))) {
    journal_entry entry;
    if (std::istringstream(line) >> entry.kind >> entry.term >> entry.id >> entry.ns) {
      entries.push_back(entry);
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const journal_entry& a, const journal_entry& b) { return a.ns < b.ns; });
  return entries;
}

/// The last "start" of the journal, if any.
inline std::optional<journal_entry> latest_start(const std::string& file) {
  std::optional<journal_entry> latest;
  for (const auto& entry : read_journal(file)) {
    if (entry.kind == "start" && (!latest || entry.term > latest->term)) latest = entry;
  }
  return latest;
}

}  // namespace s3lect::test
