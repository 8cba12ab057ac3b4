// s3lect::store_error: its message names what the store answered before the library's words.
#include <s3lect/store_error.hpp>

#include <string>
#include <utility>

namespace s3lect::inline v1 {

namespace {

// "NoSuchBucket (HTTP 404, request id tx00…): The specified bucket does not exist", or for a
// request that got no answer just its description ("connection refused"); empty when the
// answer says nothing the error code does not.
std::string describe(const response_info& info) {
  std::string text = info.error_code;
  std::string details;
  if (info.http_status != 0) details = "HTTP " + std::to_string(info.http_status);
  if (!info.request_id.empty()) {
    details += (details.empty() ? "" : ", ") + std::string("request id ") + info.request_id;
  }
  if (!details.empty()) text += (text.empty() ? "" : " ") + ("(" + details + ")");
  if (!info.message.empty()) text += (text.empty() ? "" : ": ") + info.message;
  return text;
}

}  // namespace

store_error::store_error(boost::system::error_code code, response_info info)
    : boost::system::system_error(code, describe(info)), info_(std::move(info)) {}

}  // namespace s3lect::inline v1
