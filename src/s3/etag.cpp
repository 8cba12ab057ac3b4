#include "etag.hpp"

namespace s3lect::inline v1::detail {
namespace {

/// HTTP optional whitespace, plus CR/LF in case a raw header line was passed in.
bool is_etag_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// `s` without leading and trailing whitespace.
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_etag_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_etag_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string normalize_etag(std::string_view etag) {
  etag = trim(etag);
  if (etag.starts_with("W/")) etag = trim(etag.substr(2));
  // An entity tag cannot contain '"' itself, so each side's quote can go on its own; that also
  // copes with a store that sends an unbalanced quote.
  if (etag.starts_with('"')) etag.remove_prefix(1);
  if (etag.ends_with('"')) etag.remove_suffix(1);
  return std::string(trim(etag));
}

}  // namespace s3lect::inline v1::detail
