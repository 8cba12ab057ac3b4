// HTTP/1.x answers as bytes, for the one HTTP server (http_server.cpp) and the health
// protocol's tests: a status line, the headers given, Content-Length and Connection.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3lect::inline v1::detail {

/// Header fields in the order they are sent.
using http_fields = std::vector<std::pair<std::string, std::string>>;

/// Appends an answer to `out`: status line, `headers`, Content-Length and, when the
/// connection's persistence differs from the version's default, Connection. `head` keeps the
/// Content-Length of the body but leaves the body out (a HEAD request).
void append_http_response(std::string& out, unsigned status, const http_fields& headers,
                          std::string_view body, unsigned version, bool keep_alive,
                          bool head = false);

}  // namespace s3lect::inline v1::detail
