#include "fence_envelope.hpp"

#include <charconv>
#include <random>

namespace s3lect::inline v1::detail {
namespace {

constexpr std::string_view envelope_prefix = "s3lect-fenced term=";
constexpr std::string_view write_marker = " write=";
// A term is at most 20 digits and a write id 32: a longer first line is not an envelope.
constexpr std::size_t max_envelope_line = 96;

std::optional<std::uint64_t> parse_term(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::string wrap_fenced_body(std::uint64_t term, std::string_view write_id, std::string_view body) {
  std::string stored(envelope_prefix);
  stored += std::to_string(term);
  stored += write_marker;
  stored += write_id;
  stored += '\n';
  stored += body;
  return stored;
}

std::optional<fenced_stored> unwrap_fenced_object(const object& stored, std::string& problem) {
  const auto metadata_term = stored.metadata.find(fenced_term_metadata);
  fenced_stored result;
  result.version.etag = stored.etag;
  if (!std::string_view(stored.body).starts_with(envelope_prefix)) {
    if (metadata_term != stored.metadata.end()) {
      problem =
          "the object has a term in its metadata but no fencing envelope: a writer "
          "without fencing replaced it";
      return std::nullopt;
    }
    result.version.body = stored.body;
    return result;
  }
  const std::size_t line_end = stored.body.find('\n');
  const std::size_t marker = stored.body.find(write_marker);
  if (line_end == std::string::npos || line_end > max_envelope_line || marker > line_end) {
    problem = "the fencing envelope does not parse";
    return std::nullopt;
  }
  const std::string_view body(stored.body);
  const std::optional<std::uint64_t> term =
      parse_term(body.substr(envelope_prefix.size(), marker - envelope_prefix.size()));
  const std::size_t id_start = marker + write_marker.size();
  if (!term || id_start >= line_end) {
    problem = "the fencing envelope does not parse";
    return std::nullopt;
  }
  // Metadata is what plain tools show; when the store kept it, it must tell the same term.
  if (metadata_term != stored.metadata.end() && parse_term(metadata_term->second) != term) {
    problem = "the term in the metadata (" + metadata_term->second +
              ") contradicts the fencing envelope (" + std::to_string(*term) + ")";
    return std::nullopt;
  }
  result.version.term = *term;
  result.write_id = std::string(body.substr(id_start, line_end - id_start));
  result.envelope_bytes = line_end + 1;
  result.version.body = std::string(body.substr(line_end + 1));
  return result;
}

std::string new_write_id() {
  thread_local std::random_device source;
  constexpr char hex_digits[] = "0123456789abcdef";
  std::string id;
  for (int word = 0; word < 4; ++word) {
    std::uint32_t bits = source();
    for (int digit = 0; digit < 8; ++digit, bits >>= 4) id += hex_digits[bits & 0xf];
  }
  return id;
}

fence_decision decide_fenced_write(std::uint64_t term, std::string_view write_id,
                                   const std::optional<fenced_stored>& current) {
  if (!current) return fence_decision::write;
  if (current->write_id == write_id) return fence_decision::committed;
  if (current->version.term > term) return fence_decision::fenced_out;
  return fence_decision::write;
}

}  // namespace s3lect::inline v1::detail
