// Sans-I/O parsers of what credential endpoints answer: the JSON document of IMDS and the
// container endpoint, and the XML of STS AssumeRoleWithWebIdentity. They never throw on bad
// input (only bad_alloc) and their messages name the provider and the problem, never a value
// that could be a secret.
#pragma once

#include "credentials_detail.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Parses `{"AccessKeyId": ..., "SecretAccessKey": ..., "Token": ..., "Expiration": ...}` as
/// IMDS (with "Code": "Success") and the ECS/EKS container endpoints send it. "Code", when
/// present, must be "Success"; "Token" and "Expiration" may be absent. The credentials'
/// provider is set to `provider`, which also prefixes messages.
fetch_outcome parse_json_credentials(std::string_view body, std::string_view provider,
                                     std::chrono::system_clock::time_point now);

/// A short, printable description of a JSON error body ("Code: Message", either part optional),
/// or "" when the body is not a JSON object with such fields. At most 200 characters.
std::string describe_json_error(std::string_view body);

/// Reads the answer of STS AssumeRoleWithWebIdentity: on HTTP 200 the Credentials element, else
/// the ErrorResponse's Code and Message (fetch_failed). The credentials' provider is set to
/// `provider`, which also prefixes messages.
fetch_outcome parse_sts_credentials(unsigned http_status, std::string_view body,
                                    std::string_view provider,
                                    std::chrono::system_clock::time_point now);

/// The raw content of the first element named `name` (no namespace prefix) in `xml`: empty for
/// `<Name/>`, nullopt when absent or unterminated.
std::optional<std::string_view> xml_element_content(std::string_view xml, std::string_view name);

/// The text of the first element named `name` (no namespace prefix) in `xml`, with the
/// predefined and numeric entities decoded; nullopt when absent, unterminated or not plain text.
std::optional<std::string> xml_element_text(std::string_view xml, std::string_view name);

}  // namespace s3lect::inline v1::detail
