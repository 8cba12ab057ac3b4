// The health endpoint's protocol without I/O: what a request asks for, and the responses. Pure
// functions, shared by health_handler (and through it every server) and unit-tested directly.
#pragma once

#include <s3lect/health.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s3lect::inline v1::detail {

/// The parameters of `?watch=<ms>&term=<T>[&serial=<N>]`.
struct watch_params {
  std::chrono::milliseconds duration{0};  ///< As requested; the handler caps it.
  std::uint64_t term = 0;
  /// With a serial, the watch also ends when the leader's write serial differs from it: the
  /// follower hears of every renewal (s3lect's extension; other clients leave it out).
  std::optional<std::uint64_t> serial;
};

/// A request target split at the first '?'.
struct target_parts {
  std::string_view path;
  std::string_view query;  ///< Without the '?'; empty when there is none.
};

/// Splits `target` into path and query (a fragment, which clients must not send, stays in the
/// query and fails parsing there).
target_parts split_target(std::string_view target) noexcept;

/// The watch parameters of a query, or why they are unacceptable.
struct watch_parsing {
  std::optional<watch_params> watch;  ///< Empty when the query asks for no watch.
  std::string error;                  ///< Non-empty: answer 400 with it.
};

/// Parses `watch`, `term` and `serial` from a query string. `watch` and `term` both or neither,
/// `serial` only with them; each at most once, as plain decimal numbers (no sign, no spaces;
/// up to 2^64 - 1). Other parameters are ignored so that clients may add some later.
watch_parsing parse_watch_query(std::string_view query);

/// A follower's introduction, `candidate=<id>&priority=<N>&token=<32 hex>` in the query of its
/// checks and watches (docs/peer-mode.md#candidates).
struct candidate_params {
  std::string id;             ///< Percent-decoded: 1 .. 1024 bytes of UTF-8, no control bytes.
  std::int32_t priority = 0;  ///< -1 000 000 .. 1 000 000.
  std::string token;          ///< 32 lowercase hex digits: the claimant's secret for this run.
};

/// Strict percent-decoding: every '%' starts two hex digits; only unreserved bytes and escapes
/// are accepted ('+' is not a space here). nullopt for anything else.
std::optional<std::string> percent_decode(std::string_view text);

/// The claim of a query: `candidate`, `priority` and `token` each exactly once and well formed,
/// else nullopt. A bad claim is ignored, never answered with 400: the check or watch it rides
/// on must work whatever the claim says.
std::optional<candidate_params> parse_candidate_query(std::string_view query);

/// What a request asks for.
struct routed_request {
  enum class kind { read, watch, bad_request, method_not_allowed, not_found };
  kind type = kind::not_found;
  watch_params watch;  ///< For kind::watch.
  std::string error;   ///< For kind::bad_request.
  /// For reads and watches: the follower's claim, when the query carries a well-formed one.
  std::optional<candidate_params> candidate;
};

/// Routes a request: other paths → not_found, then other methods → method_not_allowed, then
/// bad watch parameters → bad_request. `path` is compared exactly (no decoding, no trailing '/').
routed_request route_request(std::string_view method, std::string_view target,
                             std::string_view path);

/// True while `snapshot` is "leader with term `term`": the state a watch waits to see change.
bool holds_term(const leadership_snapshot& snapshot, std::uint64_t term) noexcept;

/// True while `snapshot` is the state `watch` waits to see change: leader with its term and,
/// when it names a serial, with that write serial.
bool holds_watch(const leadership_snapshot& snapshot, const watch_params& watch) noexcept;

/// Why a watch was answered; sent as the X-S3lect-Watch header so a client can tell an answer
/// that reports a change from one that was never held (and avoid re-asking in a tight loop).
enum class watch_outcome {
  changed,   ///< The state was not (or is no longer) "leader with the watched term".
  timeout,   ///< The watch time passed with the state unchanged.
  refused,   ///< Not held: too many watchers, watching disabled, or a handler that cannot wait.
  stopping,  ///< Not held, or cut short: the server is shutting down.
};

/// "changed", "timeout", "refused" or "stopping".
std::string_view to_string(watch_outcome outcome) noexcept;

/// The body of a 200: the record of the last successful write with "term" set to the
/// snapshot's term, "leaseRemainingMs", "serial" (the write serial) and, when known,
/// "writeAgeMs" (how long ago that write was sent) and, when the leader knows candidates,
/// "liveCandidates" (candidates_json()) added after the record's own fields. A record
/// that is not a JSON object, or holds a number beyond a double's range (never written by us),
/// is replaced by {"leaderID": ...} so the answer stays parseable.
std::string leader_body(const leadership_snapshot& snapshot);

/// The "liveCandidates" array of a 200 (empty when there are none): the candidates the leader
/// knows, `{"id","priority","verified"}` plus "watchingMs" for those holding a watch now.
std::string candidates_json(const std::vector<candidate_info>& candidates);

/// The body of a 404 from a follower: {"leader":false,"leaderID":"...","term":N}.
std::string follower_body(const leadership_snapshot& snapshot);

/// 200 with leader_body() while leader, else 404 with follower_body().
health_response leadership_response(const leadership_snapshot& snapshot);

/// leadership_response() with an X-S3lect-Watch header.
health_response watch_response(const leadership_snapshot& snapshot, watch_outcome outcome);

/// 400 {"error":"bad_request","message":...}.
health_response bad_request_response(std::string_view message);

/// 405 {"error":"method_not_allowed"} with `Allow: GET`.
health_response method_not_allowed_response();

/// 404 {"error":"not_found"} for paths other than the endpoint's.
health_response not_found_response();

/// 431 {"error":"request_header_fields_too_large"}.
health_response header_too_large_response();

/// 503 {"error":"stopped"}: the handler no longer has a leadership source to ask.
health_response stopped_response();

/// The answer to a request that is neither a read nor a watch (400, 404, 405); nullopt for
/// reads and watches, which need the leadership state.
std::optional<health_response> rejection_response(const routed_request& routed);

/// Appends `response` to `out` as HTTP/1.x bytes: status line, its headers, Content-Length and,
/// when the connection's persistence differs from the version's default, Connection. `head`
/// keeps the Content-Length of the body but leaves the body out (a HEAD request).
void append_http_response(std::string& out, const health_response& response, unsigned version,
                          bool keep_alive, bool head = false);

/// A bind address split into host and port.
struct bind_address_parts {
  std::string_view host;  ///< An IP literal still to be checked; IPv6 without its brackets.
  std::uint16_t port = 0;
};

/// Splits "host:port" or "[IPv6]:port"; nullopt when the shape or the port is wrong.
std::optional<bind_address_parts> split_bind_address(std::string_view address) noexcept;

}  // namespace s3lect::inline v1::detail
