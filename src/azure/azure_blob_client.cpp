// azure_blob_client: builds and authorises Blob service requests, runs each operation as a
// coroutine on its own strand under a deadline and the caller's cancellation slot (the same
// request_operation and transport as s3_client), and turns replies into s3lect::errc.
#include <s3lect/azure_blob_client.hpp>
#include <s3lect/error.hpp>

#include "azure_endpoint.hpp"
#include "azure_reply.hpp"
#include "azure_request.hpp"
#include "block_upload.hpp"
#include "etag.hpp"
#include "http_client.hpp"
#include "object_operation.hpp"
#include "shared_key.hpp"
#include "token_cache.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <atomic>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// The connection string applied and the result validated: the constructor's contract.
azure_blob_config resolved_config(const azure_blob_config& config) {
  if (auto problem = config.validate()) {
    throw boost::system::system_error(make_error_code(errc::invalid_config), *problem);
  }
  std::string problem;
  return *config.resolved(problem);
}

detail::blob_endpoint parsed_endpoint(const azure_blob_config& config) {
  std::string problem;
  return *detail::parse_blob_endpoint(config.endpoint, problem);  // validate() checked it
}

detail::blob_authorization make_authorization(const azure_blob_config& config) {
  detail::blob_authorization out;
  out.account = config.account;
  if (!config.account_key.empty()) {
    out.decoded_key = *detail::base64_decode(config.account_key);  // validate() checked it
  } else {
    out.sas_query = config.sas_token;
  }
  return out;
}

/// The token cache when requests carry Entra ID bearer tokens, else null.
std::shared_ptr<detail::token_cache> make_token_cache(const asio::any_io_executor& executor,
                                                      const azure_blob_config& config) {
  if (!config.account_key.empty() || !config.sas_token.empty()) return nullptr;
  std::shared_ptr<azure_token_provider> provider = config.token_provider;
  if (!provider) provider = make_azure_default_token_chain(executor);
  detail::cache_settings settings;
  settings.log = config.log;
  return std::make_shared<detail::token_cache>(executor, std::move(provider), std::move(settings));
}

/// True when the store refused the bearer token itself (not a missing role: that 403 is
/// AuthorizationPermissionMismatch, and a new token would not help).
bool token_refused(const response_info& info) {
  return info.http_status == 401 ||
         (info.http_status == 403 && (info.error_code == "AuthenticationFailed" ||
                                      info.error_code == "InvalidAuthenticationInfo"));
}

detail::http_client_settings make_http_client_settings(const azure_blob_config& config,
                                                       const detail::blob_endpoint& endpoint) {
  detail::http_client_settings settings;
  settings.host = endpoint.url.host;
  settings.port = endpoint.url.port;
  settings.tls = endpoint.url.tls;
  settings.tls_settings = config.tls;
  settings.max_body_bytes = config.max_body_bytes;
  settings.max_idle_connections = config.max_idle_connections;
  settings.name = "azure";
  settings.log = config.log;
  return settings;
}

/// The client's shared state; operations keep it alive while they run.
struct blob_client_core {
  blob_client_core(asio::any_io_executor ex, const azure_blob_config& cfg)
      : executor(std::move(ex)),
        config(resolved_config(cfg)),
        endpoint(parsed_endpoint(config)),
        authorization(make_authorization(config)),
        tokens(make_token_cache(executor, config)),
        pool(executor, make_http_client_settings(config, endpoint)) {}

  asio::any_io_executor executor;
  azure_blob_config config;
  detail::blob_endpoint endpoint;
  detail::blob_authorization authorization;
  std::shared_ptr<detail::token_cache> tokens;  ///< null unless bearer tokens authorise
  detail::http_client pool;
  std::atomic<std::uint64_t> gets{0};
  std::atomic<std::uint64_t> puts{0};
  std::atomic<std::uint64_t> deletes{0};
  std::atomic<std::uint64_t> failures{0};

  static constexpr std::string_view log_name = "azure";
  static constexpr std::string_view code_field = "azure_code";
  std::chrono::milliseconds request_timeout() const noexcept { return config.request_timeout; }
  const logger& log() const noexcept { return config.log; }
  void after_reply(const response_info& info) const noexcept {
    if (tokens && token_refused(info)) tokens->invalidate();
  }

  /// The request, carrying `bearer_token` when bearer tokens authorise.
  detail::http_request request(detail::s3_operation kind, std::string_view key,
                               detail::blob_request_parts parts,
                               const std::string& bearer_token) const {
    if (bearer_token.empty()) {
      return detail::build_blob_request(endpoint, config.container, authorization, kind, key,
                                        std::move(parts));
    }
    detail::blob_authorization with_token = authorization;
    with_token.bearer_token = bearer_token;
    return detail::build_blob_request(endpoint, config.container, with_token, kind, key,
                                      std::move(parts));
  }
};

/// One running Blob service operation (object_operation.hpp: the same deadline, cancellation
/// and debug line as an S3 request's).
template <class Result>
using blob_operation = detail::object_operation<Result, blob_client_core>;
template <class Result>
using coroutine_end = detail::operation_end<blob_operation<Result>>;
using detail::get_shape;

/// Why a request for `key` cannot be sent, or an empty string.
std::string key_problem(std::string_view key) {
  if (key.empty()) return "key: must not be empty";
  if (key.size() > 1024) return "key: Azure blob names are at most 1,024 characters";
  return {};
}

std::string condition_problem(const put_condition& condition) {
  if (condition.type != put_condition::kind::if_match) return {};
  if (condition.etag.empty()) return "condition: If-Match needs an ETag";
  // One entity tag, never `*` (Azurite #2589 lets If-Match: * create a missing blob) nor a
  // list (',' separates entity tags).
  if (condition.etag == "*") return "condition: If-Match needs an ETag, not *";
  for (const unsigned char c : condition.etag) {
    if (c < ' ' || c == 0x7f || c == '"' || c == ',') {
      return "condition: ETag has control characters, '\"' or ','";
    }
  }
  return {};
}

/// The bearer token for the operation's request: "" when bearer tokens do not authorise, the
/// cached one when usable, else one fetched now. nullopt when the fetch failed: the operation is
/// then finished with the provider's error and message.
template <class Result>
asio::awaitable<std::optional<std::string>> bearer_token(
    std::shared_ptr<blob_operation<Result>> op) {
  blob_client_core& client = op->client();
  if (!client.tokens) co_return std::string();
  if (std::optional<azure_token> cached = client.tokens->current()) {
    co_return std::move(cached->access_token);
  }
  auto [ec, fetched] = co_await client.tokens->async_get(asio::as_tuple(asio::use_awaitable));
  if (op->finished()) co_return std::nullopt;
  if (ec) {
    Result failed{};
    detail::info_of(failed).message = "credentials: " + fetched.message;
    op->finish(ec, std::move(failed));
    co_return std::nullopt;
  }
  co_return std::move(fetched.access_token);
}

detail::http_request get_request(const std::shared_ptr<blob_operation<get_result>>& op,
                                 const get_shape& shape, bool ranged, const std::string& bearer) {
  detail::blob_request_parts parts;
  parts.read_if_match = shape.if_etag;
  if (ranged) parts.range = "bytes=0-" + std::to_string(shape.head_bytes - 1);
  detail::http_request request =
      op->client().request(detail::s3_operation::get, op->key(), std::move(parts), bearer);
  request.reply_sink = shape.sink;
  request.truncate_long_reply = !shape.sink;
  if (shape.sink) request.on_progress = op->progress_callback();
  return request;
}

asio::awaitable<void> run_get(std::shared_ptr<blob_operation<get_result>> op, get_shape shape) {
  op->arm_timer();
  if (std::string problem = key_problem(op->key()); !problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const std::optional<std::string> bearer = co_await bearer_token(op);
  if (!bearer) co_return;
  std::shared_ptr<detail::request_control> control = op->control();
  const bool ranged = shape.head_bytes > 0;
  // Requests are named before the co_await (GCC 12, docs/architecture.md).
  detail::http_request request = get_request(op, shape, ranged, *bearer);
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;
  if (ranged && !exchanged.error && exchanged.response.status == 416) {
    // An empty blob has no first byte, so the range is refused: read it whole instead.
    detail::http_request whole = get_request(op, shape, false, *bearer);
    exchanged = co_await op->client().pool.exchange(control, std::move(whole),
                                                    detail::replay_policy::idempotent);
    if (control->aborted()) co_return;
  }
  get_result result;
  bool missing = false;
  error_code ec = detail::interpret_blob_reply(detail::s3_operation::get, exchanged, *control,
                                               result.info, missing);
  if (!ec && !missing) {
    object_metadata metadata = detail::blob_metadata_from_headers(exchanged.response.headers);
    ec = detail::take_found(exchanged.response, shape.head_bytes, std::move(metadata), result);
  }
  op->finish(ec, std::move(result));
}

/// The Put Block request of block `index` of `whole`'s body.
detail::http_request block_request(const std::shared_ptr<blob_operation<put_result>>& op,
                                   const detail::blob_request_parts& whole,
                                   const detail::block_span& span, std::string block_id,
                                   const std::string& bearer) {
  detail::blob_request_parts parts;
  parts.put = detail::blob_put::block;
  parts.block_id = std::move(block_id);
  parts.body = whole.body.substr(span.head_offset, span.head_bytes);
  if (span.file_bytes > 0) {
    parts.body_file = whole.body_file;
    parts.body_file_offset = span.file_offset;
    parts.body_file_size = span.file_bytes;
  }
  // The operation names only the method here: a block carries no condition (parts.condition is
  // unset), and its reply is read by put_block.
  detail::http_request request = op->client().request(detail::s3_operation::put_if_absent,
                                                      op->key(), std::move(parts), bearer);
  request.on_progress = op->progress_callback();
  return request;
}

/// Sends block `index` of the plan; false when the operation has finished (failed, cancelled,
/// timed out). A block changes no blob, so its reply is read as a GET's: no failure leaves the
/// write's outcome unknown.
asio::awaitable<bool> put_block(std::shared_ptr<blob_operation<put_result>> op,
                                const detail::blob_request_parts& whole,
                                const detail::block_plan& plan, const std::string& upload,
                                std::uint64_t index) {
  const std::optional<std::string> bearer = co_await bearer_token(op);
  if (!bearer) co_return false;
  ++op->client().puts;  // each block is a PUT sent; start_put counted the commit
  std::shared_ptr<detail::request_control> control = op->control();
  detail::http_request request =
      block_request(op, whole, plan.span(index), detail::block_id(upload, index), *bearer);
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return false;
  put_result result;
  bool missing = false;
  error_code ec = detail::interpret_blob_reply(detail::s3_operation::get, exchanged, *control,
                                               result.info, missing);
  if (!ec && missing) ec = errc::bad_request;  // a 404 other than ContainerNotFound
  if (!ec) co_return true;
  result.info.message = "Put Block " + std::to_string(index + 1) + " of " +
                        std::to_string(plan.count) + " (nothing written): " + result.info.message;
  op->finish(ec, std::move(result));
  co_return false;
}

/// Sends the request that may change the blob (a Put Blob, or the Put Block List that commits
/// the blocks) and finishes the operation with its answer: the new ETag, or the error.
asio::awaitable<void> send_conditional_put(std::shared_ptr<blob_operation<put_result>> op,
                                           detail::http_request request,
                                           detail::s3_operation kind) {
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::unless_written);
  if (control->aborted()) co_return;
  put_result result;
  bool missing = false;
  const error_code ec =
      detail::interpret_blob_reply(kind, exchanged, *control, result.info, missing);
  if (!ec) result.etag = detail::normalize_etag(exchanged.response.header("ETag"));
  op->finish(ec, std::move(result));
}

/// A body over max_put_blob_bytes: its blocks one after the other under a fresh upload's IDs,
/// then one Put Block List with the condition and the metadata, which makes them the blob at
/// once or fails and leaves the blob as it was (the blocks stay uncommitted: Azure discards them
/// at the blob's next commit, or after a week).
asio::awaitable<void> run_block_put(std::shared_ptr<blob_operation<put_result>> op,
                                    detail::blob_request_parts whole, detail::block_plan plan,
                                    detail::s3_operation kind) {
  const std::string upload = detail::new_upload_name();
  op->set_changes_nothing(true);
  for (std::uint64_t index = 0; index < plan.count; ++index) {
    const bool sent = co_await put_block(op, whole, plan, upload, index);
    if (!sent) co_return;
  }
  std::shared_ptr<detail::request_control> control = op->control();
  control->may_be_delivered = false;  // the blocks' requests wrote no blob
  op->set_changes_nothing(false);
  const std::optional<std::string> bearer = co_await bearer_token(op);
  if (!bearer) co_return;
  detail::blob_request_parts commit;
  commit.put = detail::blob_put::block_list;
  commit.body = detail::block_list_body(upload, plan.count);
  commit.condition = whole.condition;
  commit.metadata = whole.metadata;
  detail::http_request request = op->client().request(kind, op->key(), std::move(commit), *bearer);
  co_await send_conditional_put(op, std::move(request), kind);
}

/// Why the PUT cannot be sent (key, condition, metadata, file), or an empty string; sets
/// `file_size` to the file's size (0 without one).
std::string put_problem(const std::string& key, const detail::blob_request_parts& parts,
                        const put_condition& condition, const object_metadata& metadata,
                        std::uint64_t& file_size) {
  std::string problem = key_problem(key);
  if (problem.empty()) problem = condition_problem(condition);
  if (problem.empty()) problem = detail::blob_metadata_problem(metadata);
  file_size = 0;
  if (problem.empty() && !parts.body_file.empty()) {
    file_size = detail::regular_file_size(parts.body_file, problem).value_or(0);
  }
  return problem;
}

asio::awaitable<void> run_put(std::shared_ptr<blob_operation<put_result>> op,
                              detail::blob_request_parts parts, put_condition condition,
                              object_metadata metadata) {
  op->arm_timer();
  std::uint64_t file_size = 0;
  std::string problem = put_problem(op->key(), parts, condition, metadata, file_size);
  const azure_blob_config& config = op->client().config;
  const bool in_blocks = parts.body.size() + file_size > config.max_put_blob_bytes;
  detail::block_plan plan;
  if (problem.empty() && in_blocks) {
    plan = detail::plan_blocks(parts.body.size(), file_size, config.block_bytes, problem);
  }
  if (!problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const detail::s3_operation kind = condition.type == put_condition::kind::if_absent
                                        ? detail::s3_operation::put_if_absent
                                        : detail::s3_operation::put_if_match;
  parts.body_file_size = file_size;
  parts.condition = &condition;
  parts.metadata = &metadata;
  if (in_blocks) {
    co_await run_block_put(op, std::move(parts), plan, kind);
    co_return;
  }
  const std::optional<std::string> bearer = co_await bearer_token(op);
  if (!bearer) co_return;
  const bool streamed = !parts.body_file.empty();
  detail::http_request request = op->client().request(kind, op->key(), std::move(parts), *bearer);
  if (streamed) request.on_progress = op->progress_callback();
  co_await send_conditional_put(op, std::move(request), kind);
}

asio::awaitable<void> run_delete(std::shared_ptr<blob_operation<response_info>> op) {
  op->arm_timer();
  if (std::string problem = key_problem(op->key()); !problem.empty()) {
    op->refuse(std::move(problem));
    co_return;
  }
  const std::optional<std::string> bearer = co_await bearer_token(op);
  if (!bearer) co_return;
  detail::http_request request =
      op->client().request(detail::s3_operation::remove, op->key(), {}, *bearer);
  std::shared_ptr<detail::request_control> control = op->control();
  detail::exchange_result exchanged = co_await op->client().pool.exchange(
      control, std::move(request), detail::replay_policy::idempotent);
  if (control->aborted()) co_return;
  response_info info;
  bool missing = false;
  const error_code ec = detail::interpret_blob_reply(detail::s3_operation::remove, exchanged,
                                                     *control, info, missing);
  op->finish(ec, std::move(info));
}

void start_get(const std::shared_ptr<blob_client_core>& client, std::string key, get_shape shape,
               asio::any_completion_handler<get_signature> handler) {
  ++client->gets;
  auto op = std::make_shared<blob_operation<get_result>>(client, detail::s3_operation::get,
                                                         std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_get(op, std::move(shape)), coroutine_end<get_result>{op});
}

void start_put(const std::shared_ptr<blob_client_core>& client, std::string key,
               detail::blob_request_parts parts, put_condition condition, object_metadata metadata,
               asio::any_completion_handler<put_signature> handler) {
  ++client->puts;
  const auto kind = condition.type == put_condition::kind::if_absent
                        ? detail::s3_operation::put_if_absent
                        : detail::s3_operation::put_if_match;
  auto op = std::make_shared<blob_operation<put_result>>(client, kind, std::move(key),
                                                         std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(),
                 run_put(op, std::move(parts), std::move(condition), std::move(metadata)),
                 coroutine_end<put_result>{op});
}

}  // namespace

struct azure_blob_client::impl : blob_client_core {
  using blob_client_core::blob_client_core;
};

azure_blob_client::azure_blob_client(executor_type executor, azure_blob_config config)
    : impl_(std::make_shared<impl>(std::move(executor), config)) {}

azure_blob_client::~azure_blob_client() {
  impl_->pool.close_idle();
}

azure_blob_client::executor_type azure_blob_client::get_executor() const {
  return impl_->executor;
}

bool azure_blob_client::answers_authenticated() const noexcept {
  return impl_->config.answers_authenticated();
}

const azure_blob_config& azure_blob_client::config() const noexcept {
  return impl_->config;
}

azure_blob_client_stats azure_blob_client::stats() const {
  azure_blob_client_stats stats;
  stats.gets = impl_->gets;
  stats.puts = impl_->puts;
  stats.deletes = impl_->deletes;
  stats.failures = impl_->failures;
  stats.connections = impl_->pool.connections_opened();
  return stats;
}

void azure_blob_client::close_idle_connections() {
  impl_->pool.close_idle();
}

void azure_blob_client::get_impl(std::string key,
                                 asio::any_completion_handler<get_signature> handler) {
  start_get(impl_, std::move(key), {}, std::move(handler));
}

void azure_blob_client::get_to_impl(std::string key, body_sink sink, std::string if_etag,
                                    asio::any_completion_handler<get_signature> handler) {
  get_shape shape;
  shape.sink = std::move(sink);
  shape.if_etag = std::move(if_etag);
  start_get(impl_, std::move(key), std::move(shape), std::move(handler));
}

void azure_blob_client::get_head_impl(std::string key, std::size_t max_bytes,
                                      asio::any_completion_handler<get_signature> handler) {
  get_shape shape;
  shape.head_bytes = std::max<std::size_t>(max_bytes, 1);
  start_get(impl_, std::move(key), std::move(shape), std::move(handler));
}

void azure_blob_client::put_file_impl(std::string key, file_body body, put_condition condition,
                                      object_metadata metadata,
                                      asio::any_completion_handler<put_signature> handler) {
  detail::blob_request_parts parts;
  parts.body = std::move(body.head);
  parts.body_file = std::move(body.path);
  start_put(impl_, std::move(key), std::move(parts), std::move(condition), std::move(metadata),
            std::move(handler));
}

void azure_blob_client::put_impl(std::string key, std::string body, put_condition condition,
                                 asio::any_completion_handler<put_signature> handler) {
  put_with_metadata_impl(std::move(key), std::move(body), std::move(condition), {},
                         std::move(handler));
}

void azure_blob_client::put_with_metadata_impl(
    std::string key, std::string body, put_condition condition, object_metadata metadata,
    asio::any_completion_handler<put_signature> handler) {
  detail::blob_request_parts parts;
  parts.body = std::move(body);
  start_put(impl_, std::move(key), std::move(parts), std::move(condition), std::move(metadata),
            std::move(handler));
}

void azure_blob_client::delete_impl(std::string key, delete_handler handler) {
  ++impl_->deletes;
  auto op = std::make_shared<blob_operation<response_info>>(impl_, detail::s3_operation::remove,
                                                            std::move(key), std::move(handler));
  op->watch_cancellation(asio::cancellation_type::terminal);
  asio::co_spawn(op->strand(), run_delete(op), coroutine_end<response_info>{op});
}

}  // namespace s3lect::inline v1
