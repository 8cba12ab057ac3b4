#include "http_message.hpp"

namespace s3lect::inline v1::detail {

namespace {

/// The reason phrases of the statuses this library sends; others get none (RFC 9112 §4 allows an
/// empty reason phrase, and clients must ignore it anyway).
std::string_view reason_phrase(unsigned status) noexcept {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return {};
  }
}

}  // namespace

void append_http_response(std::string& out, unsigned status, const http_fields& headers,
                          std::string_view body, unsigned version, bool keep_alive, bool head) {
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason_phrase(status);
  out += "\r\n";
  for (const auto& [name, value] : headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "Content-Length: ";
  out += std::to_string(body.size());
  out += "\r\n";
  // HTTP/1.1 persists unless told otherwise; HTTP/1.0 closes unless told otherwise.
  if (version == 10 && keep_alive) out += "Connection: keep-alive\r\n";
  if (version != 10 && !keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head) out += body;
}

}  // namespace s3lect::inline v1::detail
