// s3lect_claim_forger: an unauthenticated client that floods a peer-mode leader's health endpoint
// with forged candidate claims (docs/chaos.md, "A claim flood"; s3lect issue 35). Each tick it
// sends, to every target, a check (or, with --watch, a watch) claiming a high priority with a
// FRESH random token, so that the leader's memory of refuted (id, token) pairs never spares it a
// registration read. It goes through the library's own peer client, from 127.0.0.1, exactly as a
// follower's checks go: a claim it can make, any stranger who reaches the port can make.
//
//   s3lect_claim_forger (--leader HOST:PORT ... | --lock s3://BUCKET/KEY [--endpoint URL]
//                        [--path-style]) [--ca FILE | --pin sha256:HEX] [--interval 900ms]
//                        [--priority 1000000] [--id forger-%n] [--watch MS]
//
// Trust: --ca FILE (CA mode), --pin (a key pin, as zero-config followers trust a leader), or,
// with --lock and neither, the pin of the record it reads. --lock reads the lock record each tick
// (credentials and region from the AWS environment) and floods whichever node leads, at its
// leaderAddr. In the id, %n is the tick's number (default: a new id each tick).
// Prints `second N sent=.. answered=.. failed=.. named=..` once a second (totals so far) and
// `result ...` on SIGTERM or SIGINT. named counts the answers and records that named one of the
// forger's ids as leader, successor or ranked candidate: a claim that moved something, which
// must never happen. Exit 0 on a signal with named=0, 3 with named>0, 2 on a usage error.
#include "peer_client.hpp"

#include <s3lect/record.hpp>
#include <s3lect/s3_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <list>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using s3lect::detail::peer_answer;
using s3lect::detail::peer_client;
using s3lect::detail::peer_client_config;

const char* usage =
    "usage: s3lect_claim_forger (--leader HOST:PORT ... | --lock s3://BUCKET/KEY [--endpoint URL]\n"
    "                            [--path-style]) [--ca FILE | --pin sha256:HEX]\n"
    "                            [--interval 900ms] [--priority 1000000] [--id forger-%n]\n"
    "                            [--watch MS]\n"
    "  --leader    a health endpoint to flood (repeat to flood several)\n"
    "  --lock      read this lock record each tick and flood its leaderAddr, trusting its\n"
    "              peerKeyPin unless --ca or --pin is given (AWS_* environment for the store)\n"
    "  --interval  time between ticks (ms, or with an s/ms suffix)\n"
    "  --priority  the claimed priority (at most 1000000, the leader's parser's bound)\n"
    "  --id        the claimed id; %n is replaced by the tick's number\n"
    "  --watch     hold each request as a watch of this many ms (default: plain checks)\n"
    "Prints `second N sent=.. answered=.. failed=.. named=..` each second, `result ...` at the\n"
    "end (SIGTERM/SIGINT). Exit 0, or 3 when one of its ids was ever named by a leader.\n";

struct options {
  std::vector<std::string> leaders;
  std::string lock_url;
  std::string endpoint;
  bool path_style = false;
  std::string ca_file;
  std::string pin;
  std::chrono::milliseconds interval{900};
  std::int32_t priority = 1'000'000;
  std::string id_pattern = "forger-%n";
  std::optional<std::chrono::milliseconds> watch;
};

std::chrono::milliseconds parse_duration(const std::string& text) {
  std::size_t used = 0;
  const long long value = std::stoll(text, &used);
  const std::string unit = text.substr(used);
  if (value < 0 || (unit != "" && unit != "ms" && unit != "s")) {
    throw std::invalid_argument("bad duration '" + text + "'");
  }
  return std::chrono::milliseconds{unit == "s" ? value * 1000 : value};
}

options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--help" || name == "-h") {
      std::cout << usage;
      std::exit(0);
    }
    if (name == "--path-style") {
      o.path_style = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(name + " needs a value");
    const std::string value = argv[++i];
    if (name == "--leader")
      o.leaders.push_back(value);
    else if (name == "--lock")
      o.lock_url = value;
    else if (name == "--endpoint")
      o.endpoint = value;
    else if (name == "--ca")
      o.ca_file = value;
    else if (name == "--pin")
      o.pin = value;
    else if (name == "--interval")
      o.interval = parse_duration(value);
    else if (name == "--priority")
      o.priority = static_cast<std::int32_t>(std::stol(value));
    else if (name == "--id")
      o.id_pattern = value;
    else if (name == "--watch")
      o.watch = parse_duration(value);
    else
      throw std::invalid_argument("unknown option " + name);
  }
  if (o.leaders.empty() == o.lock_url.empty()) {
    throw std::invalid_argument("give --leader (one or more) or --lock, not both");
  }
  if (!o.ca_file.empty() && !o.pin.empty()) throw std::invalid_argument("--ca or --pin, not both");
  if (o.lock_url.empty() && o.ca_file.empty() && o.pin.empty()) {
    throw std::invalid_argument("--leader needs --ca or --pin");
  }
  if (o.interval < 10ms) throw std::invalid_argument("--interval must be at least 10 ms");
  if (o.id_pattern.empty()) throw std::invalid_argument("--id must not be empty");
  return o;
}

/// 32 lowercase hex digits from std::random_device: a token no registration names.
std::string fresh_token() {
  static std::random_device device;
  static const char digits[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t word = device();
    for (int shift = 0; shift < 32; shift += 4) token += digits[(word >> shift) & 0xf];
  }
  return token;
}

struct tally {
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;  // 200 or 404
  std::uint64_t failed = 0;
  std::uint64_t named = 0;
  std::uint64_t records_read = 0;
  std::uint64_t records_failed = 0;

  std::string line() const {
    return "sent=" + std::to_string(sent) + " answered=" + std::to_string(answered) +
           " failed=" + std::to_string(failed) + " named=" + std::to_string(named) +
           " records=" + std::to_string(records_read) +
           " record_failures=" + std::to_string(records_failed);
  }
};

/// The flood: a tick timer, one peer client per claim (a client's claim is fixed at
/// construction, and each claim needs a fresh token), and the tally. Single-threaded.
class forger {
 public:
  forger(asio::io_context& io, options opts) : io_(io), opts_(std::move(opts)), tick_(io) {
    if (!opts_.lock_url.empty()) open_store();
  }

  void start() {
    started_ = std::chrono::steady_clock::now();
    next_tick_ = started_;
    next_report_ = started_ + 1s;
    schedule();
  }

  const tally& counts() const { return counts_; }

 private:
  struct pending_client {
    std::unique_ptr<peer_client> client;
    bool done = false;
  };

  void open_store() {
    const std::string prefix = "s3://";
    const auto slash = opts_.lock_url.find('/', prefix.size());
    if (opts_.lock_url.rfind(prefix, 0) != 0 || slash == std::string::npos) {
      throw std::invalid_argument("--lock must be s3://BUCKET/KEY");
    }
    s3lect::s3_config config;
    config.bucket = opts_.lock_url.substr(prefix.size(), slash - prefix.size());
    config.endpoint = opts_.endpoint;
    if (opts_.path_style) config.addressing = s3lect::addressing_style::path;
    config.request_timeout = 2s;
    key_ = opts_.lock_url.substr(slash + 1);
    store_ = std::make_unique<s3lect::s3_client>(io_.get_executor(), config);
  }

  void schedule() {
    next_tick_ += opts_.interval;
    tick_.expires_at(next_tick_);
    tick_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      on_tick();
      schedule();
    });
  }

  void on_tick() {
    clients_.remove_if([](const pending_client& p) { return p.done; });
    ++ticks_;
    report();
    if (!store_) {
      for (const std::string& leader : opts_.leaders) claim(leader, opts_.pin);
      return;
    }
    store_->async_get(key_, [this](boost::system::error_code ec, s3lect::get_result result) {
      if (ec || !result.found) {
        ++counts_.records_failed;
        return;
      }
      const s3lect::record_decoding decoded = s3lect::decode_record(result.found->body);
      if (!decoded.record) {
        ++counts_.records_failed;
        return;
      }
      ++counts_.records_read;
      inspect(*decoded.record);
      if (decoded.record->released || decoded.record->leader_addr.empty()) return;
      const bool own_trust = !opts_.ca_file.empty() || !opts_.pin.empty();
      claim(decoded.record->leader_addr, own_trust ? opts_.pin : decoded.record->key_pin);
    });
  }

  std::string id_for_tick() const {
    std::string id = opts_.id_pattern;
    if (const auto at = id.find("%n"); at != std::string::npos) {
      id.replace(at, 2, std::to_string(ticks_));
    }
    return id;
  }

  void claim(const std::string& leader, const std::string& pin) {
    peer_client_config config;
    config.tls.ca_file = opts_.ca_file;
    config.timeout = 2s;
    const std::string id = id_for_tick();
    ids_.insert(id);
    config.claim = s3lect::detail::candidate_claim_params{id, opts_.priority, fresh_token()};
    clients_.push_back({std::make_unique<peer_client>(io_.get_executor(), config), false});
    pending_client* pending = &clients_.back();
    std::optional<s3lect::detail::peer_watch> watch;
    if (opts_.watch) watch = s3lect::detail::peer_watch{*opts_.watch, 0, std::nullopt};
    ++counts_.sent;
    pending->client->async_check(leader, pin, watch,
                                 [this, pending](boost::system::error_code ec, peer_answer answer) {
                                   pending->done = true;
                                   if (ec) {
                                     ++counts_.failed;
                                     return;
                                   }
                                   ++counts_.answered;
                                   if (answer.leader) inspect(answer.record);
                                   if (answer.released && ids_.count(answer.released->successor)) {
                                     ++counts_.named;
                                   }
                                 });
  }

  /// A record (read from the store or in a leader's answer) that names one of our ids as its
  /// holder, successor or a ranked candidate: a forged claim moved something.
  void inspect(const s3lect::lock_record& record) {
    bool named = ids_.count(record.leader_id) || ids_.count(record.successor);
    for (const s3lect::ranked_candidate& c : record.candidates) named = named || ids_.count(c.id);
    if (named) {
      ++counts_.named;
      std::cerr << "s3lect_claim_forger: a record names a forged id (leader " << record.leader_id
                << ", term " << record.term << ")\n";
    }
  }

  void report() {
    const auto now = std::chrono::steady_clock::now();
    while (now >= next_report_) {
      ++seconds_;
      next_report_ += 1s;
      std::printf("second %llu %s\n", static_cast<unsigned long long>(seconds_),
                  counts_.line().c_str());
      std::fflush(stdout);
    }
  }

  asio::io_context& io_;
  options opts_;
  asio::steady_timer tick_;
  std::unique_ptr<s3lect::s3_client> store_;
  std::string key_;
  std::list<pending_client> clients_;
  std::set<std::string> ids_;
  tally counts_;
  std::uint64_t ticks_ = 0;
  std::uint64_t seconds_ = 0;
  std::chrono::steady_clock::time_point started_{};
  std::chrono::steady_clock::time_point next_tick_{};
  std::chrono::steady_clock::time_point next_report_{};
};

}  // namespace

int main(int argc, char** argv) {
  try {
    options opts = parse_options(argc, argv);
    std::signal(SIGPIPE, SIG_IGN);
    asio::io_context io;
    forger flood(io, std::move(opts));
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&io](boost::system::error_code, int) { io.stop(); });
    flood.start();
    std::printf("ready\n");
    std::fflush(stdout);
    io.run();
    std::printf("result %s\n", flood.counts().line().c_str());
    std::fflush(stdout);
    return flood.counts().named > 0 ? 3 : 0;
  } catch (const std::exception& e) {
    std::cerr << "s3lect_claim_forger: " << e.what() << "\n" << usage;
    return 2;
  }
}
