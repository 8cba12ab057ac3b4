// s3_client: builds and signs requests, runs each operation as a coroutine on its own strand
// under a deadline and the caller's cancellation slot, and turns replies into s3lect::errc.
// The HTTP transport lives in net/http_client.cpp, the only Beast client translation unit.
#include <s3lect/error.hpp>
#include <s3lect/s3_client.hpp>

#include "credentials_cache.hpp"
#include "etag.hpp"
#include "http_client.hpp"
#include "metadata_headers.hpp"
#include "object_operation.hpp"
#include "s3_endpoint.hpp"
#include "s3_reply.hpp"
#include "s3_request.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <optional>

namespace s3lect::inline v1 {

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

  static constexpr std::string_view log_name = "s3";
  static constexpr std::string_view code_field = "s3_code";
  std::chrono::milliseconds request_timeout() const noexcept { return config.request_timeout; }
  const logger& log() const noexcept { return config.log; }
  /// Temporary credentials revoked or expired early: fetch new ones for the next request.
  void after_reply(const response_info& info) const {
    if (info.error_code == "ExpiredToken" && credentials) credentials->invalidate();
  }

  /// The request of one operation on `key`, signed with `creds`.
  detail::http_request request(const aws_credentials& creds, detail::s3_operation kind,
                               std::string_view key, detail::s3_request_parts parts) const {
    return detail::build_s3_request(addressing, config.region, creds, kind, key, std::move(parts));
  }
};

/// One running S3 operation (object_operation.hpp).
template <class Result>
using operation = detail::object_operation<Result, client_core>;
template <class Result>
using coroutine_end = detail::operation_end<operation<Result>>;
using detail::get_shape;
using detail::info_of;

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

detail::http_request get_request(const std::shared_ptr<operation<get_result>>& op,
                                 const aws_credentials& creds, const get_shape& shape,
                                 bool ranged) {
  detail::s3_request_parts parts;
  parts.read_if_match = shape.if_etag;
  if (ranged) parts.range = "bytes=0-" + std::to_string(shape.head_bytes - 1);
  detail::http_request request =
      op->client().request(creds, detail::s3_operation::get, op->key(), std::move(parts));
  request.reply_sink = shape.sink;
  // A body over max_body_bytes is an answer too: the headers are read, the body cut.
  request.truncate_long_reply = !shape.sink;
  if (shape.sink) request.on_progress = op->progress_callback();
  return request;
}

/// The object of a successful GET reply, or protocol_error for a reply without ETag.
asio::awaitable<void> run_get(std::shared_ptr<operation<get_result>> op, get_shape shape) {
  op->arm_timer();
  if (std::string problem = detail::argument_problem(op->key(), nullptr); !problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  std::shared_ptr<detail::request_control> control = op->control();
  const bool ranged = shape.head_bytes > 0;
  // Requests are named before the co_await (GCC 12, docs/architecture.md).
  detail::http_request request = get_request(op, *creds, shape, ranged);
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;
  if (ranged && !exchanged.error && exchanged.response.status == 416) {
    // An empty object has no first byte, so S3 refuses the range: read it whole instead.
    detail::http_request whole = get_request(op, *creds, shape, false);
    exchanged = co_await op->client().pool.exchange(control, std::move(whole),
                                                    detail::replay_policy::idempotent);
    if (control->aborted()) co_return;
  }
  get_result result;
  bool missing = false;
  error_code ec =
      detail::interpret_reply(detail::s3_operation::get, exchanged, *control, result.info, missing);
  if (!ec && !missing) {
    object_metadata metadata = detail::metadata_from_headers(exchanged.response.headers);
    ec = detail::take_found(exchanged.response, shape.head_bytes, std::move(metadata), result);
  }
  op->finish(ec, std::move(result));
}

asio::awaitable<void> run_put(std::shared_ptr<operation<put_result>> op,
                              detail::s3_request_parts parts, put_condition condition,
                              object_metadata metadata) {
  op->arm_timer();
  std::string problem = detail::argument_problem(op->key(), &condition);
  if (problem.empty()) problem = detail::metadata_problem(metadata);
  std::optional<std::uint64_t> file_size{0};
  if (problem.empty() && !parts.body_file.empty()) {
    file_size = detail::regular_file_size(parts.body_file, problem);
  }
  if (!problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const detail::s3_operation kind = condition.type == put_condition::kind::if_absent
                                        ? detail::s3_operation::put_if_absent
                                        : detail::s3_operation::put_if_match;
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  parts.body_file_size = *file_size;
  parts.condition = &condition;
  parts.metadata = &metadata;
  const bool streamed = !parts.body_file.empty();
  detail::http_request request = op->client().request(*creds, kind, op->key(), std::move(parts));
  if (streamed) request.on_progress = op->progress_callback();
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::unless_written);
  if (control->aborted()) co_return;

  put_result result;
  bool missing = false;
  const error_code ec = detail::interpret_reply(kind, exchanged, *control, result.info, missing);
  // A success without an ETag still committed; the caller re-reads to learn the ETag.
  if (!ec) result.etag = detail::normalize_etag(exchanged.response.header("ETag"));
  op->finish(ec, std::move(result));
}

asio::awaitable<void> run_delete(std::shared_ptr<operation<response_info>> op) {
  op->arm_timer();
  if (std::string problem = detail::argument_problem(op->key(), nullptr); !problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const std::optional<aws_credentials> creds = co_await signing_credentials(op);
  if (!creds) co_return;
  detail::http_request request =
      op->client().request(*creds, detail::s3_operation::remove, op->key(), {});
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;

  response_info info;
  bool missing = false;
  const error_code ec =
      detail::interpret_reply(detail::s3_operation::remove, exchanged, *control, info, missing);
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

namespace {

void start_get(const std::shared_ptr<client_core>& client, std::string key, get_shape shape,
               asio::any_completion_handler<get_signature> handler) {
  ++client->gets;
  auto op = std::make_shared<operation<get_result>>(client, detail::s3_operation::get,
                                                    std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_get(op, std::move(shape)), coroutine_end<get_result>{op});
}

void start_put(const std::shared_ptr<client_core>& client, std::string key,
               detail::s3_request_parts parts, put_condition condition, object_metadata metadata,
               asio::any_completion_handler<put_signature> handler) {
  ++client->puts;
  const auto kind = condition.type == put_condition::kind::if_absent
                        ? detail::s3_operation::put_if_absent
                        : detail::s3_operation::put_if_match;
  auto op =
      std::make_shared<operation<put_result>>(client, kind, std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(),
                 run_put(op, std::move(parts), std::move(condition), std::move(metadata)),
                 coroutine_end<put_result>{op});
}

}  // namespace

void s3_client::get_impl(std::string key, asio::any_completion_handler<get_signature> handler) {
  start_get(impl_, std::move(key), {}, std::move(handler));
}

void s3_client::get_to_impl(std::string key, body_sink sink, std::string if_etag,
                            asio::any_completion_handler<get_signature> handler) {
  get_shape shape;
  shape.sink = std::move(sink);
  shape.if_etag = std::move(if_etag);
  start_get(impl_, std::move(key), std::move(shape), std::move(handler));
}

void s3_client::get_head_impl(std::string key, std::size_t max_bytes,
                              asio::any_completion_handler<get_signature> handler) {
  get_shape shape;
  shape.head_bytes = std::max<std::size_t>(max_bytes, 1);
  start_get(impl_, std::move(key), std::move(shape), std::move(handler));
}

void s3_client::put_file_impl(std::string key, file_body body, put_condition condition,
                              object_metadata metadata,
                              asio::any_completion_handler<put_signature> handler) {
  detail::s3_request_parts parts;
  parts.body = std::move(body.head);
  parts.body_file = std::move(body.path);
  start_put(impl_, std::move(key), std::move(parts), std::move(condition), std::move(metadata),
            std::move(handler));
}

void s3_client::put_impl(std::string key, std::string body, put_condition condition,
                         asio::any_completion_handler<put_signature> handler) {
  put_with_metadata_impl(std::move(key), std::move(body), std::move(condition), {},
                         std::move(handler));
}

void s3_client::put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                                       object_metadata metadata,
                                       asio::any_completion_handler<put_signature> handler) {
  detail::s3_request_parts parts;
  parts.body = std::move(body);
  start_put(impl_, std::move(key), std::move(parts), std::move(condition), std::move(metadata),
            std::move(handler));
}

void s3_client::delete_impl(std::string key, delete_handler handler) {
  ++impl_->deletes;
  auto op = std::make_shared<operation<response_info>>(impl_, detail::s3_operation::remove,
                                                       std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_delete(op), coroutine_end<response_info>{op});
}

}  // namespace s3lect::inline v1
