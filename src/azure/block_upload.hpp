// A body too large for one Put Blob, uploaded as blocks: how it is cut, the blocks' IDs and the
// Put Block List body that commits them. Pure functions, unit-tested without sockets; the
// requests are azure_blob_client's (azure_request.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace s3lect::inline v1::detail {

/// Azure's limits for a block blob (API versions since 2019-12-12): a block takes up to
/// 4,000 MiB and a blob up to 50,000 committed blocks.
inline constexpr std::uint64_t max_block_bytes = 4000ull * 1024 * 1024;
inline constexpr std::uint64_t max_blocks_per_blob = 50000;

/// The bytes of one block, in the body's order: first from the in-memory head, then from the
/// file.
struct block_span {
  std::uint64_t head_offset = 0;
  std::uint64_t head_bytes = 0;
  std::uint64_t file_offset = 0;
  std::uint64_t file_bytes = 0;
};

/// How a body of `head_size` in-memory bytes followed by `file_size` bytes of a file is cut:
/// `count` blocks of `block_bytes`, the last one shorter.
struct block_plan {
  std::uint64_t head_size = 0;
  std::uint64_t total = 0;
  std::uint64_t block_bytes = 0;
  std::uint64_t count = 0;

  /// Block `index` (below `count`).
  block_span span(std::uint64_t index) const;
};

/// The plan for a body of `head_size` + `file_size` bytes in blocks of `block_bytes` (at least
/// 1), grown to fit the body in max_blocks_per_blob blocks. Sets `problem` when even blocks of
/// max_block_bytes would not fit it.
block_plan plan_blocks(std::uint64_t head_size, std::uint64_t file_size, std::uint64_t block_bytes,
                       std::string& problem);

/// A fresh upload's name: 18 hex digits from OpenSSL's random generator, so that two writers
/// uploading to one blob at once never share a block ID (Azure keeps one set of uncommitted
/// blocks per blob, and a block written under an ID replaces the one there: with shared IDs,
/// one writer's commit could take the other's bytes).
std::string new_upload_name();

/// The ID of block `index` of upload `upload` (new_upload_name()): the base64 of 30 bytes,
/// "s3lect", the upload's name and the index in 6 digits. Every ID of a blob must have the same
/// length, and this one has no padding.
std::string block_id(std::string_view upload, std::uint64_t index);

/// The Put Block List body that commits blocks 0 to `count` - 1 of `upload` in order, each
/// taken from the blob's uncommitted blocks only (`<Uncommitted>`): an ID that another commit
/// has discarded fails the commit (400 InvalidBlockList) rather than take anything else.
std::string block_list_body(std::string_view upload, std::uint64_t count);

}  // namespace s3lect::inline v1::detail
