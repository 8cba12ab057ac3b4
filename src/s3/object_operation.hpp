// One running object-store request, as s3_client and azure_blob_client run them: the deadline
// (a bound on a stall once a body streams), what the caller's cancellation, the deadline and an
// internal error finish it with, the failure counter and the debug line. request_operation
// (net/) ends it without waiting for the I/O; this adds what both stores' clients share.
#pragma once

#include <s3lect/error.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/storage.hpp>

#include "log_text.hpp"
#include "request_operation.hpp"
#include "s3_reply.hpp"
#include "s3_request.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace s3lect::inline v1::detail {

/// The response_info of any operation's result (const or not).
template <class Result>
auto& info_of(Result& result) {
  if constexpr (std::is_same_v<std::remove_const_t<Result>, response_info>) {
    return result;
  } else {
    return result.info;
  }
}

/// How a GET takes the body.
struct get_shape {
  body_sink sink;              ///< set: streamed into it
  std::string if_etag;         ///< set: only this version
  std::size_t head_bytes = 0;  ///< above 0: the first bytes only, by a ranged GET
};

/// Whether a 206 reply's `Content-Range: bytes 0-N/TOTAL` leaves bytes after `received`.
bool range_leaves_more(std::string_view content_range, std::size_t received);

/// The object of a successful GET reply, with `metadata` read from its headers by the store's
/// own rules, into `result`; protocol_error for a reply without ETag (no conditional write can
/// follow it: such a store cannot host a lock). `head_bytes` above 0: a ranged read, cut there
/// if the store ignored the range.
boost::system::error_code take_found(http_response& response, std::size_t head_bytes,
                                     object_metadata metadata, get_result& result);

/// The size of the regular file at `path`, or nullopt with `problem` set.
std::optional<std::uint64_t> regular_file_size(const std::string& path, std::string& problem);

/// What an object_operation needs of its client (Client): `executor`, `failures` (an atomic
/// counter), `request_timeout()`, `log()`, `after_reply(const response_info&)`, and the static
/// names `log_name` ("s3") and `code_field` ("s3_code") of its debug line.
template <class Result, class Client>
class object_operation final : public request_operation<Result> {
 public:
  using base = request_operation<Result>;

  object_operation(std::shared_ptr<Client> client, s3_operation kind, std::string key,
                   typename base::handler_type handler)
      : base(boost::asio::make_strand(client->executor), client->executor, std::move(handler)),
        client_(std::move(client)),
        kind_(kind),
        key_(std::move(key)) {}

  Client& client() const noexcept { return *client_; }
  const std::string& key() const noexcept { return key_; }

  /// Starts the deadline covering the whole request, if there is one.
  void arm_timer() {
    const auto timeout = client_->request_timeout();
    if (timeout.count() > 0) this->arm_deadline(timeout);
    last_armed_ = std::chrono::steady_clock::now();
  }

  /// A streamed body moved: the deadline starts again, so that it bounds a stall rather than
  /// the whole transfer (restarted at most eight times per timeout, not for every chunk).
  void note_progress() {
    const auto timeout = client_->request_timeout();
    if (timeout.count() > 0 && std::chrono::steady_clock::now() - last_armed_ > timeout / 8) {
      arm_timer();
    }
  }

  /// A progress callback that restarts the deadline (the operation outlives its exchange).
  std::function<void()> progress_callback() {
    return [this] { note_progress(); };
  }

  /// While set, the requests being sent change no object (an Azure block upload before its
  /// commit): a deadline or an internal error then means that nothing was written.
  void set_changes_nothing(bool value) noexcept { changes_nothing_ = value; }

  /// Completes at once with `problem`, as asio::error::invalid_argument: nothing was sent.
  void refuse(std::string problem) {
    Result invalid{};
    info_of(invalid).message = std::move(problem);
    this->finish(boost::asio::error::invalid_argument, std::move(invalid));
  }

 private:
  void on_cancelled() override {
    this->control()->abort();
    Result result{};
    info_of(result).message = "cancelled";
    this->finish(boost::asio::error::operation_aborted, std::move(result));
  }

  void on_deadline() override {
    this->control()->abort();
    Result result{};
    response_info& info = info_of(result);
    const std::string waited =
        "no reply within " + std::to_string(client_->request_timeout().count()) + " ms";
    const bool maybe_written = may_have_written();
    info.message = maybe_written ? waited + "; the write may have been applied" : waited;
    this->finish(maybe_written ? errc::outcome_unknown : errc::timeout, std::move(result));
  }

  void on_internal_error(std::string what) override {
    Result result{};
    info_of(result).message = std::move(what);
    this->finish(may_have_written() ? errc::outcome_unknown : errc::protocol_error,
                 std::move(result));
  }

  bool may_have_written() const {
    return is_put(kind_) && !changes_nothing_ && this->control()->may_be_delivered;
  }

  void on_finish(const boost::system::error_code& ec, const Result& result) override {
    const response_info& info = info_of(result);
    if (ec && ec != errc::precondition_failed) ++client_->failures;
    client_->after_reply(info);
    const logger& log = client_->log();
    if (!log.enabled(log_level::debug)) return;
    std::string line = std::string(Client::log_name) +
                       " request method=" + std::string(method_of(kind_)) +
                       " key=" + log_text::value(key_) +
                       " status=" + std::to_string(info.http_status) + " ms=" + this->elapsed_ms();
    line += ec ? " result=" + log_text::value(ec.message()) : std::string(" result=ok");
    if (!info.error_code.empty()) {
      line += " " + std::string(Client::code_field) + "=" + log_text::value(info.error_code);
    }
    if (ec && !info.message.empty()) line += " detail=" + log_text::value(info.message);
    if (!info.request_id.empty()) line += " request_id=" + log_text::value(info.request_id);
    log.log(log_level::debug, line);
  }

  std::shared_ptr<Client> client_;
  s3_operation kind_;
  std::string key_;
  std::chrono::steady_clock::time_point last_armed_{};
  bool changes_nothing_ = false;
};

/// co_spawn's completion handler for an operation's coroutine.
template <class Operation>
struct operation_end {
  std::shared_ptr<Operation> op;
  void operator()(std::exception_ptr error) const { op->on_coroutine_end(error); }
};

}  // namespace s3lect::inline v1::detail
