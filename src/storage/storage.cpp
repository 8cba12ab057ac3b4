// The default of storage::put_with_metadata_impl, for storages that predate user metadata.
#include <s3lect/error.hpp>
#include <s3lect/storage.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

namespace s3lect {

void storage::put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                                     object_metadata metadata,
                                     boost::asio::any_completion_handler<put_signature> handler) {
  if (metadata.empty()) {
    put_impl(std::move(key), std::move(body), std::move(condition), std::move(handler));
    return;
  }
  put_result result;
  result.info.message = "this storage cannot store user metadata";
  // Never inside the initiating function, as every other completion.
  boost::asio::post(get_executor(),
                    boost::asio::append(std::move(handler), make_error_code(errc::bad_request),
                                        std::move(result)));
}

}  // namespace s3lect
