// The defaults of storage's virtual operations, for storages that predate them: user metadata
// refused unless empty, and the streamed operations served through the buffered ones.
#include <s3lect/error.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <fstream>
#include <iterator>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// Completes `handler` on its own executor.
template <class Handler, class Result>
void complete(Handler handler, error_code ec, Result result) {
  asio::dispatch(asio::append(std::move(handler), ec, std::move(result)));
}

/// The completion of the whole-object GET behind a default streamed or head GET: cuts or hands
/// on the body, then completes the caller's handler. Forwards the caller's cancellation slot.
struct finish_buffered_get {
  using cancellation_slot_type = asio::cancellation_slot;
  cancellation_slot_type get_cancellation_slot() const noexcept {
    return handler.get_cancellation_slot();
  }

  void operator()(error_code ec, get_result result) {
    if (!ec && result.found) ec = reshape(*result.found, result.info);
    complete(std::move(handler), ec, std::move(result));
  }

  error_code reshape(object& found, response_info& info) const {
    if (!sink) {
      found.truncated = found.body.size() > max_bytes;
      if (found.truncated) found.body.resize(max_bytes);
      return {};
    }
    if (!if_etag.empty() && found.etag != if_etag) {
      info.message = "the object changed: its ETag is no longer " + if_etag;
      return errc::precondition_failed;
    }
    const std::string body = std::move(found.body);
    found.body.clear();
    return sink(body);
  }

  body_sink sink;  ///< null for a head GET
  std::string if_etag;
  std::size_t max_bytes = 0;
  asio::any_completion_handler<get_signature> handler;
};

}  // namespace

void storage::put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                                     object_metadata metadata,
                                     asio::any_completion_handler<put_signature> handler) {
  if (metadata.empty()) {
    put_impl(std::move(key), std::move(body), std::move(condition), std::move(handler));
    return;
  }
  put_result result;
  result.info.message = "this storage cannot store user metadata";
  // Never inside the initiating function, as every other completion.
  asio::post(get_executor(), asio::append(std::move(handler), make_error_code(errc::bad_request),
                                          std::move(result)));
}

void storage::get_to_impl(std::string key, body_sink sink, std::string if_etag,
                          asio::any_completion_handler<get_signature> handler) {
  get_impl(std::move(key), asio::any_completion_handler<get_signature>(finish_buffered_get{
                               std::move(sink), std::move(if_etag), 0, std::move(handler)}));
}

void storage::get_head_impl(std::string key, std::size_t max_bytes,
                            asio::any_completion_handler<get_signature> handler) {
  get_impl(std::move(key), asio::any_completion_handler<get_signature>(
                               finish_buffered_get{nullptr, {}, max_bytes, std::move(handler)}));
}

void storage::put_file_impl(std::string key, file_body body, put_condition condition,
                            object_metadata metadata,
                            asio::any_completion_handler<put_signature> handler) {
  std::ifstream file(body.path, std::ios::binary);
  std::string bytes = std::move(body.head);
  if (file) bytes.append(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (!file && !file.eof()) {
    put_result failed;
    failed.info.message = "cannot read '" + body.path + "'";
    asio::post(get_executor(),
               asio::append(std::move(handler), make_error_code(boost::system::errc::io_error),
                            std::move(failed)));
    return;
  }
  put_with_metadata_impl(std::move(key), std::move(bytes), std::move(condition),
                         std::move(metadata), std::move(handler));
}

}  // namespace s3lect::inline v1
