// Fuzzes the reader of S3 error bodies, parse_s3_error_xml.
//
// Input: the body of a 4xx/5xx answer.
//
// Seeds (corpus/s3_error_xml/): error documents in the form of the Amazon S3 API Reference,
// "Error responses" (REST error response: <Error><Code>, <Message>, <Resource>, <RequestId>,
// <HostId>), for NoSuchKey, PreconditionFailed (with <Condition>), ConditionalRequestConflict,
// SlowDown, InternalError and SignatureDoesNotMatch; Ceph RGW's form (no <Message>, a
// <BucketName>, "tx..." request ids, as in tests/unit/s3_error_xml_test.cpp); and documents with
// entities, CDATA, comments, a namespace prefix and a BOM.
#include "s3_error_xml.hpp"

#include "fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

using s3lect::detail::parse_s3_error_xml;
using s3lect::detail::s3_error_body;

bool is_xml_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// True when `text` neither starts nor ends with XML whitespace: the parser trims fields.
bool is_trimmed(std::string_view text) {
  return text.empty() || (!is_xml_space(text.front()) && !is_xml_space(text.back()));
}

/// `text` as XML character data.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

/// An error document holding exactly `error`'s fields.
std::string document_of(const s3_error_body& error) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + escape(error.code) +
         "</Code><Message>" + escape(error.message) + "</Message><RequestId>" +
         escape(error.request_id) + "</RequestId><HostId>x</HostId></Error>";
}

bool same(const std::optional<s3_error_body>& a, const std::optional<s3_error_body>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->code == b->code && a->message == b->message && a->request_id == b->request_id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const std::optional<s3_error_body> error = parse_s3_error_xml(body);
  if (body.size() > s3lect::detail::max_s3_error_body_size) {
    S3LECT_FUZZ_CHECK(!error);
    return 0;
  }
  // A prolog changes nothing (unless the body starts with a BOM, which must come first).
  constexpr std::string_view declaration = "<?xml version=\"1.0\"?><!-- prolog -->\n";
  if (!body.starts_with("\xEF\xBB\xBF") &&
      body.size() + declaration.size() <= s3lect::detail::max_s3_error_body_size) {
    const std::string with_prolog = std::string(declaration) + std::string(body);
    S3LECT_FUZZ_CHECK(same(parse_s3_error_xml(with_prolog), error));
  }
  if (!error) return 0;

  S3LECT_FUZZ_CHECK(!error->code.empty());
  S3LECT_FUZZ_CHECK(is_trimmed(error->code));
  S3LECT_FUZZ_CHECK(is_trimmed(error->message));
  S3LECT_FUZZ_CHECK(is_trimmed(error->request_id));
  // Unescaping never lengthens text ("&#x10FFFF;" is 10 bytes, its UTF-8 four), and each field
  // comes from its own part of the body.
  S3LECT_FUZZ_CHECK(error->code.size() + error->message.size() + error->request_id.size() <=
                    body.size());

  // The fields, written back as a document, read back the same.
  const std::string document = document_of(*error);
  if (document.size() <= s3lect::detail::max_s3_error_body_size) {
    S3LECT_FUZZ_CHECK(same(parse_s3_error_xml(document), error));
  }
  return 0;
}
