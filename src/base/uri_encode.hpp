// RFC 3986 percent-encoding: SigV4's canonical requests (aws) and the candidates' claims in
// peer checks (peer) both encode with it.
#pragma once

#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// True for RFC 3986 unreserved characters (A-Z a-z 0-9 - _ . ~), the only ones left unencoded.
bool is_unreserved(unsigned char c);

/// Unreserved bytes kept, every other byte as %XX (upper-case hex); '/' is kept iff
/// `keep_slash`.
std::string uri_encode(std::string_view s, bool keep_slash);

}  // namespace s3lect::inline v1::detail
