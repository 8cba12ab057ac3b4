// `s3lect run` in peer mode and with metrics, against the local Ceph RADOS Gateway: three nodes
// with mutual TLS and watches elect one leader, whose HTTPS health endpoint answers (a
// follower's says "not leader"), hand over gracefully on SIGTERM, and report it in `status`;
// bind failures and unloadable certificates end `run` with one line; --metrics-listen serves
// Prometheus text. Certificates are made by the test (fake/test_certificates.hpp).
//
// Whether followers actually ask the leader instead of reading S3 is the elector's business and
// asserted by its own tests: the election here is correct either way.
#include "support/cli_harness.hpp"
#include "support/cli_journal.hpp"
#include "support/test_certificates.hpp"

#include <s3lect/tls.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>

namespace s3lect {
namespace {

using test::cli_process;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using test::eventually;
using test::expect_one_line_error;
using test::free_port;
using test::free_ports;
using test::journal_entry;
using test::journaling_command;
using test::json_number;
using test::latest_start;
using test::lines_of;
using test::read_file;
using test::read_journal;

class CliPeerIntegration : public test::CliIntegration {
 protected:
  void SetUp() override {
    CliIntegration::SetUp();
    pki = test::make_test_pki("s3lect peer test CA");
    ca = write("ca.pem", pki.ca.certificate);
    cert = write("node.pem", pki.server.certificate);
    node_key = write("node-key.pem", pki.server.private_key);
    client_cert = write("client.pem", pki.client.certificate);
    client_key = write("client-key.pem", pki.client.private_key);
  }

  std::string write(const std::string& name, const std::string& content) const {
    const std::string path = scratch + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  /// `run` with short timings in peer mode with mutual TLS and watches, on 127.0.0.1:`port`.
  std::vector<std::string> peer_args(const std::string& id, unsigned short port) const {
    auto args = run_args(id);
    args.insert(args.end(),
                {"--peer", "--peer-watch", "--peer-listen", "127.0.0.1:" + std::to_string(port),
                 "--peer-cert", cert, "--peer-key", node_key, "--peer-ca", ca, "--peer-client-cert",
                 client_cert, "--peer-client-key", client_key});
    return args;
  }

  /// `args` without `--log-level debug`: the server's own debug line about a failed bind would
  /// be a second line beside the error.
  static std::vector<std::string> quiet(std::vector<std::string> args) {
    const auto level = std::find(args.begin(), args.end(), "--log-level");
    if (level != args.end()) args.erase(level, level + 2);
    return args;
  }

  test::test_pki pki;
  std::string ca, cert, node_key, client_cert, client_key;
};

struct http_reply {
  int status = 0;
  std::string content_type;
  std::string body;
};

http_reply parse_reply(const std::string& raw) {
  http_reply reply;
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return reply;
  std::istringstream(raw.substr(raw.find(' ') + 1)) >> reply.status;
  for (const auto& line : lines_of(raw.substr(0, end))) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.rfind("content-type:", 0) == 0) {
      reply.content_type = line.substr(line.find_first_not_of(' ', 13));
      if (!reply.content_type.empty() && reply.content_type.back() == '\r') {
        reply.content_type.pop_back();
      }
    }
  }
  reply.body = raw.substr(end + 4);
  return reply;
}

void bound_receive(tcp::socket& socket) {
  timeval timeout{10, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

/// The key pin of the certificate the server of `stream` presented.
std::string server_key_pin(ssl::stream<tcp::socket>& stream) {
  X509* certificate = SSL_get0_peer_certificate(stream.native_handle());
  BIO* bio = BIO_new(BIO_s_mem());
  if (certificate == nullptr || bio == nullptr || PEM_write_bio_X509(bio, certificate) != 1) {
    BIO_free(bio);
    return {};
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return public_key_pin(pem);
}

/// GET `target` over TLS from 127.0.0.1:`port`, verifying the server against `ca_pem` (empty:
/// not verified; `server_pin` then gets the pin of its key) and presenting `identity` when
/// given. nullopt when the connection or handshake fails.
std::optional<http_reply> tls_get(unsigned short port, const std::string& target,
                                  const std::string& ca_pem, const test::pem_pair* identity,
                                  std::string* server_pin = nullptr) {
  asio::io_context io;
  ssl::context context(ssl::context::tls_client);
  if (ca_pem.empty()) {
    context.set_verify_mode(ssl::verify_none);
  } else {
    context.add_certificate_authority(asio::buffer(ca_pem));
    context.set_verify_mode(ssl::verify_peer);
    context.set_verify_callback(ssl::host_name_verification("127.0.0.1"));
  }
  if (identity) {
    context.use_certificate_chain(asio::buffer(identity->certificate));
    context.use_private_key(asio::buffer(identity->private_key), ssl::context::pem);
  }
  ssl::stream<tcp::socket> stream(io, context);
  boost::system::error_code ec;
  stream.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return std::nullopt;
  bound_receive(stream.next_layer());
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return std::nullopt;
  if (server_pin) *server_pin = server_key_pin(stream);
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  asio::write(stream, asio::buffer(request), ec);
  if (ec) return std::nullopt;
  std::string raw;
  asio::read(stream, asio::dynamic_buffer(raw), ec);
  // TLS 1.3: a server requiring a client certificate refuses it after the handshake, at the
  // first read.
  if (raw.empty()) return std::nullopt;
  return parse_reply(raw);
}

/// GET `target` over plain HTTP from `endpoint`.
std::optional<http_reply> plain_get(tcp::endpoint endpoint, const std::string& target) {
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(endpoint, ec);
  if (ec) return std::nullopt;
  bound_receive(socket);
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request), ec);
  if (ec) return std::nullopt;
  std::string raw;
  asio::read(socket, asio::dynamic_buffer(raw), ec);
  if (raw.empty()) return std::nullopt;
  return parse_reply(raw);
}

/// The string value of `"key":"…"` in a flat JSON object, if any.
std::optional<std::string> json_string(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":\"");
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + key.size() + 4;
  return json.substr(start, json.find('"', start) - start);
}

/// The value of the sample `series` (name and labels exactly as rendered) in Prometheus text.
std::optional<double> sample(const std::string& text, const std::string& series) {
  for (const auto& line : lines_of(text)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

/// Where the "metrics server listening" log line says the server listens, 0 if not yet.
unsigned short logged_metrics_port(const std::string& log) {
  const auto line = log.find("msg=\"metrics server listening\"");
  if (line == std::string::npos) return 0;
  const auto port = log.find("port=", line);
  if (port == std::string::npos) return 0;
  return static_cast<unsigned short>(std::stoi(log.substr(port + 5)));
}

TEST_F(CliPeerIntegration, ThreeNodesElectOneLeaderServeHealthAndHandOverOnSigterm) {
  const std::string journal = scratch + "/journal";
  std::map<std::string, unsigned short> ports;
  std::map<std::string, cli_process*> nodes;
  const std::vector<unsigned short> picked = free_ports(3);
  for (const char* id : {"peer-0", "peer-1", "peer-2"}) {
    ports[id] = picked[ports.size()];
    auto args = peer_args(id, ports[id]);
    args.insert(args.end(), {"--", "sh", "-c", journaling_command(journal)});
    nodes[id] = &start(args);
    if (std::string(id) == "peer-0") {
      ASSERT_TRUE(eventually([&] { return latest_start(journal).has_value(); }, 15s))
          << nodes[id]->err();
    }
  }
  const journal_entry first = *latest_start(journal);
  ASSERT_EQ(nodes.count(first.id), 1u) << first.id;
  cli_process& leader = *nodes[first.id];

  // status: the leader's record, advertising its --peer-listen address.
  auto& before = status();
  ASSERT_EQ(before.status, std::optional<int>(0)) << before.err();
  EXPECT_EQ(json_string(before.out(), "leaderID"), first.id) << before.out();
  EXPECT_EQ(json_string(before.out(), "leaderAddr"), "127.0.0.1:" + std::to_string(ports[first.id]))
      << before.out();
  EXPECT_EQ(json_number(before.out(), "term"), first.term) << before.out();
  EXPECT_NE(before.out().find("\"released\":false"), std::string::npos) << before.out();

  // Every node listens: the leader answers 200 with its record, followers 404.
  for (const auto& entry : ports) {
    // Named copies: a lambda may not capture structured bindings before clang 16.
    const std::string id = entry.first;
    const auto port = entry.second;
    std::optional<http_reply> reply;
    ASSERT_TRUE(eventually(
        [&] {
          reply = tls_get(port, "/health/leadership", pki.ca.certificate, &pki.client);
          return reply && (id != first.id || reply->status == 200);
        },
        5s))
        << id << ": " << nodes[id]->err();
    EXPECT_EQ(reply->status, id == first.id ? 200 : 404) << id << ": " << reply->body;
    if (id == first.id) {
      EXPECT_EQ(json_string(reply->body, "leaderID"), first.id) << reply->body;
      EXPECT_EQ(json_number(reply->body, "term"), first.term) << reply->body;
    }
  }
  // Mutual TLS: without a client certificate nothing is answered.
  EXPECT_FALSE(tls_get(ports[first.id], "/health/leadership", pki.ca.certificate, nullptr));

  // The health endpoint also serves the leader's metrics.
  const auto metrics = tls_get(ports[first.id], "/metrics", pki.ca.certificate, &pki.client);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string labels =
      "{lock=\"" + key + "\",id=\"" + first.id + "\",bucket=\"" + s3.bucket + "\"}";
  EXPECT_EQ(sample(metrics->body, "s3lect_is_leader" + labels), 1.0) << metrics->body;
  EXPECT_EQ(sample(metrics->body, "s3lect_term" + labels), static_cast<double>(first.term))
      << metrics->body;
  EXPECT_EQ(sample(metrics->body, "s3lect_acquisitions_total" + labels), 1.0) << metrics->body;

  // Graceful handover: the leader stops its command, releases, then closes its endpoint.
  ::kill(leader.pid, SIGTERM);
  ASSERT_TRUE(leader.wait(10s)) << leader.err();
  EXPECT_EQ(leader.status, std::optional<int>(0)) << leader.err();
  const std::string log = leader.err();
  const auto released = log.find("msg=\"stopped campaigning\"");
  const auto closed = log.find("msg=\"peer health server stopped\"");
  ASSERT_NE(released, std::string::npos) << log;
  ASSERT_NE(closed, std::string::npos) << log;
  EXPECT_LT(released, closed) << "the lock must be released before the endpoint closes";
  EXPECT_FALSE(tls_get(ports[first.id], "/health/leadership", pki.ca.certificate, &pki.client))
      << "still listening after the stop";

  ASSERT_TRUE(eventually([&] { return latest_start(journal)->term > first.term; }, 10s))
      << read_file(journal) << nodes["peer-1"]->err();
  const journal_entry second = *latest_start(journal);
  EXPECT_EQ(second.term, first.term + 1);
  EXPECT_NE(second.id, first.id);
  auto& after = status();
  ASSERT_EQ(after.status, std::optional<int>(0)) << after.err();
  EXPECT_EQ(json_string(after.out(), "leaderID"), second.id) << after.out();
  EXPECT_EQ(json_string(after.out(), "leaderAddr"), "127.0.0.1:" + std::to_string(ports[second.id]))
      << after.out();
  std::optional<http_reply> new_leader;
  ASSERT_TRUE(eventually(
      [&] {
        new_leader =
            tls_get(ports[second.id], "/health/leadership", pki.ca.certificate, &pki.client);
        return new_leader && new_leader->status == 200;
      },
      5s));
  EXPECT_EQ(json_number(new_leader->body, "term"), second.term) << new_leader->body;

  for (const auto& [id, node] : nodes) {
    if (id != first.id) ::kill(node->pid, SIGTERM);
  }
  for (const auto& [id, node] : nodes) {
    ASSERT_TRUE(node->wait(10s)) << id;
    EXPECT_EQ(node->status, std::optional<int>(0)) << id << ": " << node->err();
  }
  // The commands never overlapped: each start follows the previous command's end.
  std::optional<long long> running;
  for (const auto& entry : read_journal(journal)) {
    if (entry.kind == "start") {
      EXPECT_FALSE(running) << read_file(journal);
      running = entry.term;
    } else {
      running.reset();
    }
  }
  auto& last = status();
  EXPECT_NE(last.out().find("\"released\":true"), std::string::npos) << last.out();
}

TEST_F(CliPeerIntegration, WithoutCertificatesFollowersTrustTheLeaderByThePinInTheRecord) {
  const std::string journal = scratch + "/journal";
  std::map<std::string, unsigned short> ports;
  std::map<std::string, cli_process*> nodes;
  const std::vector<unsigned short> picked = free_ports(3);
  for (const char* id : {"zc-0", "zc-1", "zc-2"}) {
    ports[id] = picked[ports.size()];
    auto args = run_args(id);
    args.insert(args.end(), {"--peer", "--peer-watch", "--peer-listen",
                             "127.0.0.1:" + std::to_string(ports[id]), "--", "sh", "-c",
                             journaling_command(journal)});
    nodes[id] = &start(args);
  }
  ASSERT_TRUE(eventually([&] { return latest_start(journal).has_value(); }, 15s));
  const journal_entry first = *latest_start(journal);
  ASSERT_EQ(nodes.count(first.id), 1u) << first.id;

  // The leader's endpoint serves its record, whose pin is that of the key it presents.
  std::string presented_pin;
  std::optional<http_reply> reply;
  ASSERT_TRUE(eventually(
      [&] {
        reply = tls_get(ports[first.id], "/health/leadership", "", nullptr, &presented_pin);
        return reply && reply->status == 200;
      },
      5s));
  EXPECT_EQ(json_string(reply->body, "peerKeyPin"), presented_pin) << reply->body;
  EXPECT_EQ(presented_pin.size(), 71u) << presented_pin;

  // The followers settle on the leader's endpoint, trusted by the pin alone.
  for (const auto& [id, node] : nodes) {
    if (id == first.id) continue;
    EXPECT_TRUE(eventually(
        [&, node = node] {
          return node->err().find("msg=\"peer check\" address=127.0.0.1:" +
                                  std::to_string(ports[first.id])) != std::string::npos &&
                 node->err().find("result=ok leader=true") != std::string::npos;
        },
        10s))
        << id << ": " << node->err();
  }

  // ...and hold a watch. A watch answered at once (the first one after a plain check, when a
  // renewal landed in between) is followed by a pause of 250 ms without one, and a release in
  // that pause reaches the follower only by a read of the store (seen on a loaded TSan run).
  // Once a follower's last watch answer was not at once, its next watch went out with it.
  for (const auto& [id, node] : nodes) {
    if (id == first.id) continue;
    EXPECT_TRUE(eventually(
        [node = node] {
          const std::string err = node->err();
          const auto answered = err.rfind(" watch_ms=");
          const auto paused = err.rfind("watch answered at once");
          return answered != std::string::npos &&
                 (paused == std::string::npos || paused < answered);
        },
        10s))
        << id << ": " << node->err();
  }

  // A graceful handover: the watching follower takes over the named release without a read.
  ::kill(nodes[first.id]->pid, SIGTERM);
  ASSERT_TRUE(nodes[first.id]->wait(10s));
  ASSERT_TRUE(eventually([&] { return latest_start(journal)->term > first.term; }, 10s))
      << read_file(journal);
  const journal_entry second = *latest_start(journal);
  EXPECT_EQ(second.term, first.term + 1);
  EXPECT_NE(nodes[second.id]->err().find("taking over without a read"), std::string::npos)
      << nodes[second.id]->err();
  for (const auto& [id, node] : nodes) {
    if (id != first.id) ::kill(node->pid, SIGTERM);
  }
  for (const auto& [id, node] : nodes) {
    ASSERT_TRUE(node->wait(10s)) << id;
    EXPECT_EQ(node->status, std::optional<int>(0)) << id << ": " << node->err();
  }
}

TEST_F(CliPeerIntegration, BindFailuresAndBadCertificatesEndRunWithOneLine) {
  asio::io_context io;
  tcp::acceptor taken(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::string address = "127.0.0.1:" + std::to_string(taken.local_endpoint().port());

  auto args = quiet(peer_args("bind-peer", taken.local_endpoint().port()));
  args.insert(args.end(), {"--", "true"});
  expect_one_line_error(run(args), 9, "--peer-listen: cannot listen on " + address);

  args = quiet(run_args("bind-metrics"));
  args.insert(args.end(), {"--metrics-listen", address, "--", "true"});
  expect_one_line_error(run(args), 9, "--metrics-listen: cannot listen on " + address);

  args = quiet(run_args("bind-foreign"));
  args.insert(args.end(), {"--metrics-listen", "192.0.2.1:9100", "--", "true"});
  expect_one_line_error(run(args), 9, "--metrics-listen: cannot listen on 192.0.2.1:9100");

  cert = write("garbage.pem", "not a certificate\n");
  args = quiet(peer_args("bad-cert", free_port()));
  args.insert(args.end(), {"--", "true"});
  expect_one_line_error(run(args), 2, "--peer-cert: ");

  expect_one_line_error(
      run({"run", "--lock", lock(), "--peer", "--peer-advertise", "0.0.0.0:8443", "--", "true"}), 2,
      "--peer-advertise: 0.0.0.0:8443 is not an address followers can reach");
}

/// The port --metrics-listen 127.0.0.1:0 picked, once logged; 0 when not within 10 s.
unsigned short wait_for_metrics_port(cli_process& node) {
  unsigned short port = 0;
  eventually(
      [&] {
        port = logged_metrics_port(node.err());
        return port != 0;
      },
      10s);
  return port;
}

TEST_F(CliPeerIntegration, MetricsListenServesPrometheusText) {
  auto args = run_args("metrics-node");
  args.insert(args.end(), {"--metrics-listen", "127.0.0.1:0", "--", "sh", "-c",
                           "echo started > " + scratch + "/started; exec sleep 60"});
  cli_process& node = start(args);
  const unsigned short port = wait_for_metrics_port(node);
  ASSERT_NE(port, 0) << node.err();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(scratch + "/started"); }, 15s))
      << node.err();
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  const std::string labels =
      "{lock=\"" + key + "\",id=\"metrics-node\",bucket=\"" + s3.bucket + "\"}";
  std::optional<http_reply> reply;
  // Leadership is reported before the command starts; a renewal follows within --frequent.
  ASSERT_TRUE(eventually(
      [&] {
        reply = plain_get(endpoint, "/metrics");
        return reply && sample(reply->body, "s3lect_renewals_total" + labels).value_or(0) >= 1;
      },
      10s))
      << (reply ? reply->body : "no answer") << node.err();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(sample(reply->body, "s3lect_is_leader" + labels), 1.0) << reply->body;
  EXPECT_EQ(sample(reply->body, "s3lect_acquisitions_total" + labels), 1.0) << reply->body;
  EXPECT_GE(sample(reply->body, "s3lect_term" + labels).value_or(0), 1.0) << reply->body;
  // Every renewal is a PUT that succeeded; the acquisition is one more PUT, counted as failed
  // when its answer came after request_timeout (a loaded machine) and a re-read found it won.
  const auto puts = [&](const std::string& outcome) {
    return sample(reply->body, "s3lect_s3_requests_total{lock=\"" + key +
                                   "\",id=\"metrics-node\",bucket=\"" + s3.bucket +
                                   "\",operation=\"put\",outcome=\"" + outcome + "\"}")
        .value_or(0);
  };
  const double renewals = sample(reply->body, "s3lect_renewals_total" + labels).value_or(0);
  EXPECT_GE(puts("ok"), renewals) << reply->body;
  EXPECT_GE(puts("ok") + puts("failed"), 1 + renewals) << reply->body;
  EXPECT_NE(reply->body.find("# TYPE s3lect_renewal_latency_seconds histogram"), std::string::npos);
  // The probes of docs/operations.md: a leader that renews is live and ready.
  for (const char* probe : {"/healthz", "/readyz"}) {
    const auto answer = plain_get(endpoint, probe);
    ASSERT_TRUE(answer) << probe;
    EXPECT_EQ(answer->status, 200) << probe << ": " << answer->body;
    EXPECT_EQ(answer->body, "ok: leader\n") << probe;
  }
  const auto other = plain_get(endpoint, "/");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);

  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(node.wait(10s));
  EXPECT_EQ(node.status, std::optional<int>(0)) << node.err();
  EXPECT_NE(node.err().find("msg=\"metrics server stopped\""), std::string::npos) << node.err();
  EXPECT_FALSE(plain_get(endpoint, "/metrics")) << "still listening after the stop";
}

TEST_F(CliPeerIntegration, SilentConnectionsFromOneAddressAreRefusedCountedAndDroppedByTheMetrics) {
  auto args = run_args("silent-target");
  args.insert(args.end(), {"--metrics-listen", "127.0.0.1:0", "--", "sleep", "60"});
  cli_process& node = start(args);
  const unsigned short port = wait_for_metrics_port(node);
  ASSERT_NE(port, 0) << node.err();
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  // From 127.0.0.2 (Linux loopback answers 127/8), twelve connections that say nothing: the
  // metrics listener holds 8 per address, refuses the rest, and closes the 8 at the
  // first-request deadline (5 s), not the 90 s idle timeout.
  asio::io_context io;
  std::vector<tcp::socket> silent;
  for (int i = 0; i < 12; ++i) {
    silent.emplace_back(io);
    silent.back().open(tcp::v4());
    silent.back().bind({asio::ip::make_address("127.0.0.2"), 0});
    silent.back().connect(endpoint);
  }
  const std::string series =
      "{lock=\"" + key + "\",id=\"silent-target\",bucket=\"" + s3.bucket + "\",server=\"metrics\"";
  std::optional<http_reply> reply;
  const auto value = [&](const std::string& name, const std::string& reason = "") {
    const std::string labels = series + (reason.empty() ? "" : ",reason=\"" + reason + "\"");
    return reply ? sample(reply->body, name + labels + "}") : std::nullopt;
  };
  // Scrapes from 127.0.0.1 are answered all along.
  ASSERT_TRUE(eventually(
      [&] {
        reply = plain_get(endpoint, "/metrics");
        return value("s3lect_server_first_request_timeouts_total") == 8.0;
      },
      20s))
      << (reply ? reply->body : "no answer") << node.err();
  EXPECT_EQ(value("s3lect_server_connections_refused_total", "per_source"), 4.0) << reply->body;
  EXPECT_EQ(value("s3lect_server_connections_refused_total", "max_connections"), 0.0);
  EXPECT_GE(value("s3lect_server_connections_accepted_total").value_or(0), 13.0);
  EXPECT_NE(node.err().find("msg=\"metrics dropped connections"), std::string::npos) << node.err();
  EXPECT_NE(node.err().find("last_source=127.0.0.2"), std::string::npos) << node.err();
  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(node.wait(10s));
}

TEST_F(CliPeerIntegration, ALowSoftFileDescriptorLimitIsRaisedToWhatTheServersNeed) {
  auto args = run_args("fd-node");
  args.insert(args.end(), {"--metrics-listen", "127.0.0.1:0", "--", "sleep", "60"});
  // The child inherits a soft limit of 80 (the hard one stays): below the 97 that the reserve
  // and the metrics listener need.
  rlimit inherited{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &inherited), 0);
  if (inherited.rlim_max != RLIM_INFINITY && inherited.rlim_max < 97) GTEST_SKIP();
  rlimit low = inherited;
  low.rlim_cur = 80;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  cli_process& node = start(args);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &inherited), 0);
  const unsigned short port = wait_for_metrics_port(node);
  ASSERT_NE(port, 0) << node.err();
  EXPECT_NE(node.err().find("msg=\"raised the file descriptor limit\" soft=97 "), std::string::npos)
      << node.err();
  EXPECT_EQ(node.err().find("level=warning"), std::string::npos) << node.err();
  const auto reply =
      plain_get(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), "/metrics");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200);
  ::kill(node.pid, SIGTERM);
  ASSERT_TRUE(node.wait(10s));
}

}  // namespace
}  // namespace s3lect
