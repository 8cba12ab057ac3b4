// The bytes of a fenced version: an envelope line `s3lect-fenced term=T write=ID` and the
// writer's body. The line makes every version's ETag unique, carries the term where a store
// that drops user metadata cannot lose it, and names the write so that a re-read after an
// unknown outcome can tell whether that write committed. Pure functions, unit-tested.
#pragma once

#include <s3lect/fenced_object.hpp>
#include <s3lect/storage.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// A stored object read through the envelope.
struct fenced_stored {
  fenced_version version;
  std::string write_id;            ///< Empty for an object without envelope (term 0).
  std::size_t envelope_bytes = 0;  ///< The envelope line with its newline; 0 without envelope.
};

/// Bytes that always hold a whole envelope line: the ranged read that decides a write.
inline constexpr std::size_t fenced_head_bytes = 128;

/// The stored bytes for `body` written with `term` by write `write_id`.
std::string wrap_fenced_body(std::uint64_t term, std::string_view write_id, std::string_view body);

/// `stored` read through the envelope, or nullopt with `problem` set when the envelope does not
/// parse or the term metadata contradicts it. An object without envelope and without term
/// metadata is term 0 with its whole body; one with term metadata but no envelope is refused
/// (a fenced object overwritten by a plain writer).
std::optional<fenced_stored> unwrap_fenced_object(const object& stored, std::string& problem);

/// A fresh random write id: 32 hex digits.
std::string new_write_id();

/// What a fenced write does after reading the object.
enum class fence_decision {
  write,       ///< Our term is at least the stored one: PUT conditionally.
  fenced_out,  ///< A higher term has written: refuse.
  committed,   ///< The object is our own write (an earlier PUT's outcome was unknown): done.
};

/// The decision for a write with `term` and `write_id` on `current` (nullopt: no object).
fence_decision decide_fenced_write(std::uint64_t term, std::string_view write_id,
                                   const std::optional<fenced_stored>& current);

}  // namespace s3lect::inline v1::detail
