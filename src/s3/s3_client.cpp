// s3_client: builds and signs requests, runs each operation as a coroutine on its own strand
// under a deadline and the caller's cancellation slot, and turns replies into s3lect::errc.
// The HTTP transport lives in net/http_client.cpp, the only Beast client translation unit.
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "credentials_cache.hpp"
#include "etag.hpp"
#include "http_client.hpp"
#include "log_text.hpp"
#include "metadata_headers.hpp"
#include "request_operation.hpp"
#include "s3_endpoint.hpp"
#include "s3_error_xml.hpp"
#include "s3_reply.hpp"
#include "sigv4.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <exception>
#include <optional>
#include <type_traits>

namespace s3lect {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// Applies the environment and validates; the constructor's contract.
s3_config resolved_config(s3_config config) {
  config.apply_environment();
  if (auto problem = config.validate()) {
    throw boost::system::system_error(make_error_code(errc::invalid_config), *problem);
  }
  return config;
}

detail::endpoint_url parsed_endpoint(const s3_config& config) {
  std::string problem;
  return *detail::parse_endpoint_url(config.endpoint, problem);  // validate() checked it
}

detail::http_client_settings make_http_client_settings(
    const s3_config& config, const detail::endpoint_url& endpoint,
    const detail::request_addressing& addressing) {
  detail::http_client_settings settings;
  settings.host = addressing.connect_host;
  settings.port = endpoint.port;
  settings.tls = endpoint.tls;
  settings.tls_settings = config.tls;
  settings.max_body_bytes = config.max_body_bytes;
  settings.max_idle_connections = config.max_idle_connections;
  settings.log = config.log;
  return settings;
}

// --- credentials (see credentials_cache.hpp for the refresh design) ---------------------------

/// The cache of a client without explicit keys: the configured provider, else the default chain.
std::shared_ptr<detail::credentials_cache> make_credentials_cache(const asio::any_io_executor& ex,
                                                                  const s3_config& config) {
  if (!config.creds.access_key_id.empty()) return nullptr;
  std::shared_ptr<credentials_provider> provider = config.creds_provider;
  if (!provider) {
    credentials_chain_options options;
    options.region = config.region;
    options.log = config.log;
    provider = make_default_credentials_chain(ex, std::move(options));
  }
  detail::cache_settings settings;
  settings.log = config.log;
  return std::make_shared<detail::credentials_cache>(ex, std::move(provider), std::move(settings));
}

/// The explicit keys, labelled "explicit" unless apply_environment() labelled them.
aws_credentials explicit_credentials(const s3_config& config) {
  aws_credentials creds = config.creds;
  if (!creds.access_key_id.empty() && creds.provider.empty()) creds.provider = "explicit";
  return creds;
}

/// The client's shared state; operations keep it alive while they run.
struct client_core {
  client_core(asio::any_io_executor ex, s3_config cfg)
      : executor(std::move(ex)),
        config(resolved_config(std::move(cfg))),
        endpoint(parsed_endpoint(config)),
        addressing(detail::choose_addressing(endpoint, config.bucket, config.addressing)),
        pool(executor, make_http_client_settings(config, endpoint, addressing)),
        static_credentials(explicit_credentials(config)),
        credentials(make_credentials_cache(executor, config)) {}

  asio::any_io_executor executor;
  s3_config config;
  detail::endpoint_url endpoint;
  detail::request_addressing addressing;
  detail::http_client pool;
  aws_credentials static_credentials;                      ///< used when `credentials` is null
  std::shared_ptr<detail::credentials_cache> credentials;  ///< null with explicit keys
  std::atomic<std::uint64_t> gets{0};
  std::atomic<std::uint64_t> puts{0};
  std::atomic<std::uint64_t> deletes{0};
  std::atomic<std::uint64_t> failures{0};
};

bool is_put(detail::s3_operation kind) {
  return kind == detail::s3_operation::put_if_absent || kind == detail::s3_operation::put_if_match;
}

std::string_view method_of(detail::s3_operation kind) {
  switch (kind) {
    case detail::s3_operation::get:
      return "GET";
    case detail::s3_operation::remove:
      return "DELETE";
    default:
      return "PUT";
  }
}

/// The response_info of any operation's result (const or not).
template <class Result>
auto& info_of(Result& result) {
  if constexpr (std::is_same_v<std::remove_const_t<Result>, response_info>) {
    return result;
  } else {
    return result.info;
  }
}

bool has_control_character(std::string_view s) {
  for (unsigned char c : s) {
    if (c < ' ' || c == 0x7f) return true;
  }
  return false;
}

/// Why a request cannot be sent as asked, or an empty string.
std::string argument_problem(std::string_view key, const put_condition* condition) {
  if (key.empty()) return "key: must not be empty";
  if (condition && condition->type == put_condition::kind::if_match) {
    if (condition->etag.empty()) return "condition: If-Match needs an ETag";
    // Header values must not carry CR/LF: it would split the request.
    if (has_control_character(condition->etag)) return "condition: ETag has control characters";
  }
  return {};
}

/// A request for `key` signed with `creds`. `condition` is null except for PUT, `metadata`
/// null or empty except for a PUT with user metadata.
detail::http_request build_request(const client_core& client, const aws_credentials& creds,
                                   detail::s3_operation kind, std::string_view key,
                                   std::string body, const put_condition* condition,
                                   const object_metadata* metadata = nullptr) {
  const s3_config& config = client.config;
  detail::http_request request;
  request.method = std::string(method_of(kind));
  request.target = detail::s3_object_path(client.addressing.path_bucket, key);

  const std::string payload_hash = detail::sha256_hex(body);
  const std::string amz_date = detail::format_amz_date(std::chrono::system_clock::now());
  auto& headers = request.headers;
  headers.emplace_back("Host", client.addressing.host_header);
  headers.emplace_back("x-amz-date", amz_date);
  headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!creds.session_token.empty()) {
    headers.emplace_back("x-amz-security-token", creds.session_token);
  }
  if (condition) {
    if (condition->type == put_condition::kind::if_absent) {
      headers.emplace_back("If-None-Match", "*");
    } else {
      // Unquoted: Ceph RGW refuses a quoted ETag with 412, AWS accepts both.
      headers.emplace_back("If-Match", condition->etag);
    }
    headers.emplace_back("Content-Type", "application/json");
  }
  if (metadata) detail::append_metadata_headers(*metadata, headers);

  detail::sigv4_request to_sign;
  to_sign.method = request.method;
  to_sign.canonical_uri = request.target;
  to_sign.headers = headers;
  to_sign.payload_hash = payload_hash;
  detail::sigv4_key signing_key;
  signing_key.access_key_id = creds.access_key_id;
  signing_key.secret_access_key = creds.secret_access_key;
  detail::sigv4_scope scope;
  scope.amz_date = amz_date;
  scope.region = config.region;
  scope.service = "s3";
  headers.emplace_back("Authorization", detail::authorization_header(signing_key, scope, to_sign));
  // Unsigned on purpose: proxies may rewrite it.
  headers.emplace_back("User-Agent", "s3lect");
  request.body = std::move(body);
  return request;
}

/// Fills `info` from an exchange and returns the operation's error; `missing` is set for a GET
/// or DELETE that found no object.
error_code interpret(detail::s3_operation kind, detail::exchange_result& exchanged,
                     const detail::request_control& control, response_info& info, bool& missing) {
  info.round_trip = exchanged.round_trip;
  if (exchanged.error) {
    info.message = exchanged.detail;
    if (is_put(kind) && control.may_be_delivered) {
      info.message = "the write may have been applied: " + info.message;
      return errc::outcome_unknown;
    }
    return exchanged.error;
  }

  const detail::http_response& response = exchanged.response;
  info.http_status = response.status;
  info.server_date = detail::parse_http_date(response.header("Date"));
  info.request_id = std::string(response.header("x-amz-request-id"));
  if (response.status >= 300) {
    if (auto body = detail::parse_s3_error_xml(response.body)) {
      info.error_code = std::move(body->code);
      info.message = std::move(body->message);
      if (!body->request_id.empty()) info.request_id = std::move(body->request_id);
    }
  }
  const detail::reply_verdict verdict =
      detail::classify_reply(kind, response.status, info.error_code);
  // A 4xx without an S3 error body or request id is some other server's answer (a web server,
  // a wrong --endpoint). Its bare 404 above all must not read as "no object": every lock would
  // look free, and `run` would campaign for ever against something that stores nothing.
  const bool s3_shaped = !info.error_code.empty() || !info.request_id.empty();
  if (!s3_shaped && response.status >= 400 && response.status < 500) {
    info.message = "the endpoint does not answer like S3: HTTP " + std::to_string(response.status) +
                   " without an S3 error body or x-amz-request-id (check --endpoint)";
    if (verdict.object_missing) return errc::bad_request;
  }
  missing = verdict.object_missing;
  return verdict.error;
}

/// One running S3 operation (see request_operation for how the deadline and the caller's
/// terminal cancellation end it without waiting for the I/O).
template <class Result>
class operation final : public detail::request_operation<Result> {
 public:
  using base = detail::request_operation<Result>;

  operation(std::shared_ptr<client_core> client, detail::s3_operation kind, std::string key,
            typename base::handler_type handler)
      : base(asio::make_strand(client->executor), client->executor, std::move(handler)),
        client_(std::move(client)),
        kind_(kind),
        key_(std::move(key)) {}

  client_core& client() const noexcept { return *client_; }
  const std::string& key() const noexcept { return key_; }

  /// Starts the deadline covering the whole request, if there is one.
  void arm_timer() {
    const auto timeout = client_->config.request_timeout;
    if (timeout.count() > 0) this->arm_deadline(timeout);
  }

 private:
  void on_cancelled() override {
    this->control()->abort();
    Result result{};
    info_of(result).message = "cancelled";
    this->finish(asio::error::operation_aborted, std::move(result));
  }

  void on_deadline() override {
    this->control()->abort();
    Result result{};
    response_info& info = info_of(result);
    const std::string waited =
        "no reply within " + std::to_string(client_->config.request_timeout.count()) + " ms";
    if (is_put(kind_) && this->control()->may_be_delivered) {
      info.message = waited + "; the write may have been applied";
      this->finish(errc::outcome_unknown, std::move(result));
      return;
    }
    info.message = waited;
    this->finish(errc::timeout, std::move(result));
  }

  void on_internal_error(std::string what) override {
    Result result{};
    info_of(result).message = std::move(what);
    const error_code ec = is_put(kind_) && this->control()->may_be_delivered
                              ? make_error_code(errc::outcome_unknown)
                              : make_error_code(errc::protocol_error);
    this->finish(ec, std::move(result));
  }

  void on_finish(const error_code& ec, const Result& result) override {
    const response_info& info = info_of(result);
    if (ec && ec != errc::precondition_failed) ++client_->failures;
    // Temporary credentials revoked or expired early: fetch new ones for the next request.
    if (info.error_code == "ExpiredToken" && client_->credentials) {
      client_->credentials->invalidate();
    }
    const logger& log = client_->config.log;
    if (!log.enabled(log_level::debug)) return;
    std::string line = "s3 request method=" + std::string(method_of(kind_)) +
                       " key=" + log_text::value(key_) +
                       " status=" + std::to_string(info.http_status) + " ms=" + this->elapsed_ms();
    line += ec ? " result=" + log_text::value(ec.message()) : std::string(" result=ok");
    if (!info.error_code.empty()) line += " s3_code=" + log_text::value(info.error_code);
    if (ec && !info.message.empty()) line += " detail=" + log_text::value(info.message);
    if (!info.request_id.empty()) line += " request_id=" + log_text::value(info.request_id);
    log.log(log_level::debug, line);
  }

  std::shared_ptr<client_core> client_;
  detail::s3_operation kind_;
  std::string key_;
};

/// co_spawn's completion handler for an operation's coroutine.
template <class Result>
struct coroutine_end {
  std::shared_ptr<operation<Result>> op;
  void operator()(std::exception_ptr error) const { op->on_coroutine_end(error); }
};

/// The credentials to sign with: at once when cached ones are usable (a refresh due by then runs
/// in the background), else after the fetch. nullopt when the operation ended meanwhile: a
/// failed fetch finishes it with the provider's error.
template <class Result>
asio::awaitable<std::optional<aws_credentials>> signing_credentials(
    std::shared_ptr<operation<Result>> op) {
  client_core& client = op->client();
  if (!client.credentials) co_return client.static_credentials;
  if (std::optional<aws_credentials> cached = client.credentials->current()) co_return cached;
  auto [ec, fetched] = co_await client.credentials->async_get(asio::as_tuple(asio::use_awaitable));
  if (op->finished()) co_return std::nullopt;
  if (ec) {
    Result failed{};
    info_of(failed).message = "credentials: " + fetched.message;
    op->finish(ec, std::move(failed));
    co_return std::nullopt;
  }
  co_return std::move(fetched.credentials);
}

asio::awaitable<void> run_get(std::shared_ptr<operation<get_result>> op) {
  op->arm_timer();
  if (const std::string problem = argument_problem(op->key(), nullptr); !problem.empty()) {
    get_result invalid;
    invalid.info.message = problem;
    op->finish(asio::error::invalid_argument, std::move(invalid));
    co_return;
  }
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  detail::http_request request =
      build_request(op->client(), *creds, detail::s3_operation::get, op->key(), {}, nullptr);
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;

  get_result result;
  bool missing = false;
  error_code ec = interpret(detail::s3_operation::get, exchanged, *control, result.info, missing);
  if (!ec && !missing) {
    const std::string_view etag = exchanged.response.header("ETag");
    if (etag.empty()) {
      // Without an ETag no conditional write can follow: such a store cannot host a lock.
      ec = errc::protocol_error;
      result.info.message = "GET reply has no ETag header";
    } else {
      object found;
      found.body = std::move(exchanged.response.body);
      found.etag = detail::normalize_etag(etag);
      found.last_modified = detail::parse_http_date(exchanged.response.header("Last-Modified"));
      found.metadata = detail::metadata_from_headers(exchanged.response.headers);
      result.found.emplace(std::move(found));
    }
  }
  op->finish(ec, std::move(result));
}

asio::awaitable<void> run_put(std::shared_ptr<operation<put_result>> op, std::string body,
                              put_condition condition, object_metadata metadata) {
  op->arm_timer();
  std::string problem = argument_problem(op->key(), &condition);
  if (problem.empty()) problem = detail::metadata_problem(metadata);
  if (!problem.empty()) {
    put_result invalid;
    invalid.info.message = problem;
    op->finish(asio::error::invalid_argument, std::move(invalid));
    co_return;
  }
  const detail::s3_operation kind = condition.type == put_condition::kind::if_absent
                                        ? detail::s3_operation::put_if_absent
                                        : detail::s3_operation::put_if_match;
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  detail::http_request request =
      build_request(op->client(), *creds, kind, op->key(), std::move(body), &condition, &metadata);
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::unless_written);
  if (control->aborted()) co_return;

  put_result result;
  bool missing = false;
  const error_code ec = interpret(kind, exchanged, *control, result.info, missing);
  // A success without an ETag still committed; the caller re-reads to learn the ETag.
  if (!ec) result.etag = detail::normalize_etag(exchanged.response.header("ETag"));
  op->finish(ec, std::move(result));
}

asio::awaitable<void> run_delete(std::shared_ptr<operation<response_info>> op) {
  op->arm_timer();
  if (const std::string problem = argument_problem(op->key(), nullptr); !problem.empty()) {
    response_info invalid;
    invalid.message = problem;
    op->finish(asio::error::invalid_argument, std::move(invalid));
    co_return;
  }
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  detail::http_request request =
      build_request(op->client(), *creds, detail::s3_operation::remove, op->key(), {}, nullptr);
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;

  response_info info;
  bool missing = false;
  const error_code ec = interpret(detail::s3_operation::remove, exchanged, *control, info, missing);
  op->finish(ec, std::move(info));
}

}  // namespace

struct s3_client::impl : client_core {
  using client_core::client_core;
};

s3_client::s3_client(executor_type executor, s3_config config)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(config))) {}

s3_client::~s3_client() {
  impl_->pool.close_idle();
}

s3_client::executor_type s3_client::get_executor() const {
  return impl_->executor;
}

bool s3_client::answers_authenticated() const noexcept {
  return impl_->config.answers_authenticated();
}

const s3_config& s3_client::config() const noexcept {
  return impl_->config;
}

s3_client_stats s3_client::stats() const {
  s3_client_stats stats;
  stats.gets = impl_->gets;
  stats.puts = impl_->puts;
  stats.deletes = impl_->deletes;
  stats.failures = impl_->failures;
  stats.connections = impl_->pool.connections_opened();
  return stats;
}

credentials_origin s3_client::credentials_in_use() const {
  if (impl_->credentials) return impl_->credentials->origin();
  credentials_origin origin;
  origin.provider = impl_->static_credentials.provider;
  origin.access_key_id = impl_->static_credentials.access_key_id;
  origin.expiration = impl_->static_credentials.expiration;
  return origin;
}

void s3_client::close_idle_connections() {
  impl_->pool.close_idle();
}

void s3_client::get_impl(std::string key, asio::any_completion_handler<get_signature> handler) {
  ++impl_->gets;
  auto op = std::make_shared<operation<get_result>>(impl_, detail::s3_operation::get,
                                                    std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_get(op), coroutine_end<get_result>{op});
}

void s3_client::put_impl(std::string key, std::string body, put_condition condition,
                         asio::any_completion_handler<put_signature> handler) {
  put_with_metadata_impl(std::move(key), std::move(body), std::move(condition), {},
                         std::move(handler));
}

void s3_client::put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                                       object_metadata metadata,
                                       asio::any_completion_handler<put_signature> handler) {
  ++impl_->puts;
  const auto kind = condition.type == put_condition::kind::if_absent
                        ? detail::s3_operation::put_if_absent
                        : detail::s3_operation::put_if_match;
  auto op =
      std::make_shared<operation<put_result>>(impl_, kind, std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(),
                 run_put(op, std::move(body), std::move(condition), std::move(metadata)),
                 coroutine_end<put_result>{op});
}

void s3_client::delete_impl(std::string key, delete_handler handler) {
  ++impl_->deletes;
  auto op = std::make_shared<operation<response_info>>(impl_, detail::s3_operation::remove,
                                                       std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_delete(op), coroutine_end<response_info>{op});
}

}  // namespace s3lect
