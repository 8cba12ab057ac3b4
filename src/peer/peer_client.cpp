// The peer health client: what a check asks (the target, the watch), which connection it goes
// over (one http_client per leader address), and the check's life (deadline, cancellation,
// close()). No Beast here: the HTTP and TLS work is net/http_client.cpp's, and the answer's
// meaning peer_response.cpp's.
#include "peer_client.hpp"

#include <s3lect/error.hpp>

#include "health_protocol.hpp"
#include "http_client.hpp"
#include "log_text.hpp"
#include "request_operation.hpp"
#include "tls_context.hpp"
#include "uri_encode.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <vector>

namespace s3lect::inline v1::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// A health answer's header is a few hundred bytes; anything near this is not a leader talking.
constexpr std::uint32_t max_header_bytes = 16 * 1024;
/// Longest watch asked for (the server caps it far lower); keeps deadlines far from overflow.
constexpr std::chrono::milliseconds max_watch{std::chrono::hours{24}};

[[noreturn]] void throw_config(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, "peer_client_config." + message);
}

std::shared_ptr<asio::ssl::context> make_client_tls_context(const peer_client_config& config) {
  return make_shared_tls_context(config.tls, tls_role::client, "peer_client_config.tls.");
}

/// The context of checks against a pin: the pin replaces the CAs (a self-signed leader chains to
/// none), the client certificate stays.
std::shared_ptr<asio::ssl::context> make_pinned_tls_context(const peer_client_config& config) {
  tls_config pinned = config.tls;
  pinned.verify_peer = false;
  pinned.ca_file.clear();
  pinned.ca_pem.clear();
  return make_shared_tls_context(pinned, tls_role::client, "peer_client_config.tls.");
}

/// Where a leader address points.
struct leader_endpoint {
  std::string host;  ///< A name or an IP literal (IPv6 without brackets).
  std::uint16_t port = 0;
};

std::optional<leader_endpoint> parse_leader_address(std::string_view address) {
  // Same shape as a bind address, but the host may be a name and the port must not be 0.
  const std::optional<bind_address_parts> parts = split_bind_address(address);
  if (!parts || parts->port == 0) return std::nullopt;
  leader_endpoint endpoint{std::string(parts->host), parts->port};
  const bool printable = std::all_of(endpoint.host.begin(), endpoint.host.end(),
                                     [](char c) { return c > ' ' && c <= '~'; });
  if (!printable) return std::nullopt;
  error_code ec;
  asio::ip::make_address(endpoint.host, ec);
  // "[name]:port" is not an address anyone writes; brackets are for IPv6 literals only.
  if (address.front() == '[' && ec) return std::nullopt;
  return endpoint;
}

}  // namespace

class check_operation;

/// What peer_client shares with its operations, which may outlive it.
struct peer_client_state {
  peer_client_state(asio::any_io_executor ex, peer_client_config cfg)
      : executor(std::move(ex)),
        strand(asio::make_strand(executor)),
        config(std::move(cfg)),
        tls(make_client_tls_context(config)),
        pinned_tls(make_pinned_tls_context(config)) {}

  /// Strand only. The HTTP client for `address`, whose one idle connection checks to the same
  /// leader reuse; a check to another address replaces it (the old one's idle connection
  /// closes once the checks still using it end).
  std::shared_ptr<http_client> client_for(const std::string& address, const std::string& key_pin,
                                          const leader_endpoint& endpoint) {
    if (client && client_address == address && client_key_pin == key_pin) return client;
    http_client_settings settings;
    settings.host = endpoint.host;
    settings.port = endpoint.port;
    // The contexts are built: of the TLS settings the client reads only verify_peer, off when
    // the pin, not the host name, says whom to trust.
    settings.tls_context = tls;
    if (!key_pin.empty()) {
      settings.tls_settings.verify_peer = false;
      settings.tls_context = pinned_tls;
      settings.key_pin = key_pin;
    }
    settings.max_body_bytes = config.max_body_bytes;
    settings.max_header_bytes = max_header_bytes;
    settings.max_idle_connections = 1;
    settings.name = "peer";
    settings.log = config.log;
    settings.counters = counters;
    client = std::make_shared<http_client>(strand, std::move(settings));
    client_address = address;
    client_key_pin = key_pin;
    return client;
  }

  /// Strand only.
  void add_pending(const std::shared_ptr<check_operation>& operation) {
    std::erase_if(pending, [](const std::weak_ptr<check_operation>& p) { return p.expired(); });
    pending.push_back(operation);
  }

  void close_on_strand();

  asio::any_io_executor executor;
  asio::strand<asio::any_io_executor> strand;
  const peer_client_config config;
  const std::shared_ptr<asio::ssl::context> tls;
  const std::shared_ptr<asio::ssl::context> pinned_tls;
  const std::shared_ptr<http_client_counters> counters = std::make_shared<http_client_counters>();

  std::shared_ptr<http_client> client;                  // strand only
  std::string client_address;                           // strand only
  std::string client_key_pin;                           // strand only
  std::vector<std::weak_ptr<check_operation>> pending;  // strand only

  std::atomic<std::uint64_t> checks{0};
  std::atomic<std::uint64_t> failures{0};
};

/// One running check (see request_operation for how the deadline, the caller's cancellation of
/// any type and close() end it without waiting for the I/O).
class check_operation final : public request_operation<peer_answer> {
 public:
  check_operation(std::shared_ptr<peer_client_state> client, std::string address,
                  std::string key_pin, std::optional<peer_watch> watch, handler_type handler)
      : request_operation(client->strand, client->executor, std::move(handler)),
        client_(std::move(client)),
        address_(std::move(address)),
        key_pin_(std::move(key_pin)),
        watch_(watch) {}

  peer_client_state& client() const noexcept { return *client_; }
  const std::string& address() const noexcept { return address_; }
  const std::string& key_pin() const noexcept { return key_pin_; }
  const std::optional<peer_watch>& watch() const noexcept { return watch_; }

  /// Starts the deadline covering the whole check.
  void arm_timer(std::chrono::milliseconds limit) {
    limit_ = limit;
    arm_deadline(limit);
  }

  /// Ends the check with `ec` without waiting for the I/O in flight.
  void abort(error_code ec, std::string message) {
    if (finished()) return;
    control()->abort();
    fail(ec, std::move(message));
  }

  /// Completes the check with `ec` and an answer carrying only `message`.
  void fail(error_code ec, std::string message) {
    peer_answer answer;
    answer.message = std::move(message);
    finish(ec, std::move(answer));
  }

 private:
  void on_cancelled() override { abort(asio::error::operation_aborted, "cancelled"); }

  void on_deadline() override {
    const std::string phase = control()->phase;
    abort(errc::timeout,
          "no answer within " + std::to_string(limit_.count()) + " ms (while " + phase + ")");
  }

  void on_internal_error(std::string what) override { fail(errc::protocol_error, std::move(what)); }

  void on_finish(const error_code& ec, const peer_answer& answer) override {
    if (ec) ++client_->failures;
    const logger& log = client_->config.log;
    if (!log.enabled(log_level::debug)) return;
    std::string line = "peer check address=" + log_text::value(address_);
    if (watch_) {
      line += " watch_ms=" + std::to_string(watch_->duration.count()) +
              " term=" + std::to_string(watch_->term);
    }
    line += " status=" + std::to_string(answer.http_status) + " ms=" + elapsed_ms();
    if (ec) {
      line +=
          " result=" + log_text::value(ec.message()) + " detail=" + log_text::value(answer.message);
    } else {
      line += std::string(" result=ok leader=") + (answer.leader ? "true" : "false") +
              " term=" + std::to_string(answer.term) +
              " watch=" + std::string(to_string(answer.watch));
    }
    log.log(log_level::debug, line);
  }

  std::shared_ptr<peer_client_state> client_;
  std::string address_;
  std::string key_pin_;
  std::optional<peer_watch> watch_;
  std::chrono::milliseconds limit_{0};
};

void peer_client_state::close_on_strand() {
  if (client) client->close_idle();
  client.reset();
  std::vector<std::weak_ptr<check_operation>> closing;
  closing.swap(pending);
  for (const std::weak_ptr<check_operation>& weak : closing) {
    if (auto operation = weak.lock()) operation->abort(errc::stopped, "peer client closed");
  }
}

namespace {

using operation_ptr = std::shared_ptr<check_operation>;

std::string claim_query(const candidate_claim_params& claim) {
  return "candidate=" + uri_encode(claim.id, false) +
         "&priority=" + std::to_string(claim.priority) + "&token=" + claim.token;
}

http_request make_request(const peer_client_config& config, const std::string& address,
                          const std::optional<peer_watch>& watch) {
  http_request request;
  request.method = "GET";
  request.target = config.health_path;
  if (watch) {
    request.target += "?watch=" + std::to_string(watch->duration.count()) +
                      "&term=" + std::to_string(watch->term);
    if (watch->serial) request.target += "&serial=" + std::to_string(*watch->serial);
  }
  if (config.claim) {
    request.target += watch ? '&' : '?';
    request.target += claim_query(*config.claim);
  }
  request.headers = {{"Host", address}, {"User-Agent", "s3lect"}, {"Accept", "application/json"}};
  return request;
}

/// The leader address and the watch, checked; nullopt when the check was finished as invalid.
std::optional<leader_endpoint> checked_endpoint(check_operation& op) {
  const std::optional<leader_endpoint> endpoint = parse_leader_address(op.address());
  if (!endpoint) {
    // The address comes from another node's record: keep it printable and short in a log.
    std::string shown = op.address().substr(0, 64);
    std::replace_if(
        shown.begin(), shown.end(), [](char c) { return c < ' ' || c > '~'; }, '?');
    op.fail(asio::error::invalid_argument,
            "leader address '" + shown + "': not host:port, IPv4:port or [IPv6]:port");
    return std::nullopt;
  }
  const std::optional<peer_watch>& watch = op.watch();
  if (watch && (watch->duration.count() < 0 || watch->duration > max_watch)) {
    op.fail(asio::error::invalid_argument, "watch duration: must be 0 .. 24 h, is " +
                                               std::to_string(watch->duration.count()) + " ms");
    return std::nullopt;
  }
  return endpoint;
}

asio::awaitable<void> run_check(operation_ptr op) {
  peer_client_state& state = op->client();
  state.add_pending(op);
  const std::optional<leader_endpoint> endpoint = checked_endpoint(*op);
  if (!endpoint) co_return;
  const std::optional<peer_watch>& watch = op->watch();
  op->arm_timer(state.config.timeout + (watch ? watch->duration : std::chrono::milliseconds{0}));

  std::shared_ptr<request_control> control = op->control();
  if (watch) control->waiting_phase = "waiting for the watch to end";
  // A plain check changes nothing and is resent once when a kept-alive connection turns out
  // closed; a watch is not: there the same failure is how a crashed leader shows itself.
  const replay_policy replay = watch ? replay_policy::never : replay_policy::idempotent;
  std::shared_ptr<http_client> client = state.client_for(op->address(), op->key_pin(), *endpoint);
  http_request request = make_request(state.config, op->address(), watch);
  exchange_result exchanged = co_await client->exchange(control, std::move(request), replay);
  if (op->finished()) co_return;
  if (exchanged.error) {
    op->fail(exchanged.error, std::move(exchanged.detail));
    co_return;
  }
  const http_response& response = exchanged.response;
  peer_parsing parsing = parse_peer_response(response.status, response.header("X-S3lect-Watch"),
                                             response.body, state.config.max_body_bytes);
  op->finish(parsing.error, std::move(parsing.answer));
}

/// co_spawn's completion handler for a check's coroutine.
struct coroutine_end {
  operation_ptr op;
  void operator()(std::exception_ptr failure) const { op->on_coroutine_end(failure); }
};

struct close_on_strand {
  std::shared_ptr<peer_client_state> state;
  void operator()() const { state->close_on_strand(); }
};

bool printable_path(const std::string& path) {
  return std::all_of(path.begin(), path.end(),
                     [](char c) { return c > ' ' && c <= '~' && c != '?' && c != '#'; });
}

}  // namespace

std::optional<std::string> peer_client_config::validate() const {
  if (!tls.certificate_file.empty() && !tls.certificate_pem.empty()) {
    return "tls.certificate_file: set together with tls.certificate_pem; set one of them";
  }
  if (!tls.private_key_file.empty() && !tls.private_key_pem.empty()) {
    return "tls.private_key_file: set together with tls.private_key_pem; set one of them";
  }
  const bool has_certificate = !tls.certificate_file.empty() || !tls.certificate_pem.empty();
  const bool has_key = !tls.private_key_file.empty() || !tls.private_key_pem.empty();
  if (has_certificate && !has_key) {
    return "tls.private_key_pem: required with a client certificate";
  }
  if (has_key && !has_certificate) return "tls.certificate_pem: required with a client key";
  if (!tls.verify_peer) return "tls.verify_peer: a peer client always verifies the leader";
  if (tls.require_client_cert) return "tls.require_client_cert: applies to servers only";
  if (health_path.empty() || health_path.front() != '/') {
    return "health_path: must start with '/'";
  }
  if (health_path.size() > 1024 || !printable_path(health_path)) {
    return "health_path: must be at most 1024 printable ASCII characters without space, '?' "
           "or '#'";
  }
  if (timeout <= std::chrono::milliseconds::zero()) {
    return "timeout: must be greater than 0 ms, is " + std::to_string(timeout.count()) + " ms";
  }
  if (timeout > max_watch) return "timeout: must be at most 24 h";
  if (max_body_bytes == 0) return "max_body_bytes: must be greater than 0";
  if (claim && !parse_candidate_query(claim_query(*claim))) {
    return "claim: id must be 1 .. 1024 bytes of printable UTF-8, priority within -1000000 .. "
           "1000000 and token 32 lowercase hex digits";
  }
  return std::nullopt;
}

peer_client::peer_client(executor_type executor, peer_client_config config) {
  if (auto error = config.validate()) throw_config(*error);
  state_ = std::make_shared<peer_client_state>(std::move(executor), std::move(config));
}

peer_client::~peer_client() {
  asio::post(state_->strand, close_on_strand{state_});
}

peer_client::executor_type peer_client::get_executor() const {
  return state_->executor;
}

const peer_client_config& peer_client::config() const noexcept {
  return state_->config;
}

void peer_client::close() {
  asio::post(state_->strand, close_on_strand{state_});
}

peer_client_stats peer_client::stats() const {
  peer_client_stats stats;
  stats.checks = state_->checks;
  stats.requests = state_->counters->requests_sent;
  stats.connections_opened = state_->counters->connections_opened;
  stats.failures = state_->failures;
  return stats;
}

void peer_client::check_impl(std::string leader_addr, std::string key_pin,
                             std::optional<peer_watch> watch,
                             asio::any_completion_handler<check_signature> handler) {
  ++state_->checks;
  auto op = std::make_shared<check_operation>(state_, std::move(leader_addr), std::move(key_pin),
                                              watch, std::move(handler));
  op->watch_cancellation(asio::cancellation_type::all);
  asio::co_spawn(state_->strand, run_check(op), coroutine_end{op});
}

}  // namespace s3lect::inline v1::detail
