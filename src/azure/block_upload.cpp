#include "block_upload.hpp"

#include "shared_key.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>

namespace s3lect::inline v1::detail {

block_span block_plan::span(std::uint64_t index) const {
  const std::uint64_t start = index * block_bytes;
  const std::uint64_t end = std::min(total, start + block_bytes);
  block_span out;
  if (start < head_size) {
    out.head_offset = start;
    out.head_bytes = std::min(end, head_size) - start;
  }
  const std::uint64_t file_start = std::max(start, head_size);
  if (end > file_start) {
    out.file_offset = file_start - head_size;
    out.file_bytes = end - file_start;
  }
  return out;
}

block_plan plan_blocks(std::uint64_t head_size, std::uint64_t file_size, std::uint64_t block_bytes,
                       std::string& problem) {
  block_plan plan;
  plan.head_size = head_size;
  plan.total = head_size + file_size;
  plan.block_bytes = std::max<std::uint64_t>(block_bytes, 1);
  const std::uint64_t fitting = (plan.total + max_blocks_per_blob - 1) / max_blocks_per_blob;
  plan.block_bytes = std::max(plan.block_bytes, fitting);
  if (plan.block_bytes > max_block_bytes) {
    problem = "body: over the 50,000 blocks of 4,000 MiB a block blob takes";
    return plan;
  }
  plan.count = (plan.total + plan.block_bytes - 1) / plan.block_bytes;
  return plan;
}

std::string new_upload_name() {
  std::array<unsigned char, 9> random{};
  // Without randomness two writers could pick one name: refuse rather than risk it.
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    throw std::runtime_error("OpenSSL's random generator failed (RAND_bytes)");
  }
  std::string name;
  for (const unsigned char byte : random) {
    static constexpr char hex[] = "0123456789abcdef";
    name += hex[byte >> 4];
    name += hex[byte & 0xf];
  }
  return name;
}

std::string block_id(std::string_view upload, std::uint64_t index) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06llu", static_cast<unsigned long long>(index));
  return base64_encode("s3lect" + std::string(upload) + digits);
}

std::string block_list_body(std::string_view upload, std::uint64_t count) {
  std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>";
  for (std::uint64_t index = 0; index < count; ++index) {
    body += "<Uncommitted>";
    body += block_id(upload, index);  // base64: nothing to escape in XML
    body += "</Uncommitted>";
  }
  body += "</BlockList>";
  return body;
}

}  // namespace s3lect::inline v1::detail
