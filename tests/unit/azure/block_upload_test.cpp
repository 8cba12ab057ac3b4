// How a body above Put Blob's limit is cut into blocks, the blocks' IDs (one length, unique per
// upload) and the Put Block List body that commits them.
#include "block_upload.hpp"

#include "shared_key.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace s3lect::detail {
namespace {

TEST(BlockUpload, BlocksCoverTheHeadThenTheFileOnceEachInOrder) {
  std::string problem;
  const block_plan plan = plan_blocks(5, 20, 7, problem);
  ASSERT_EQ(problem, "");
  ASSERT_EQ(plan.count, 4u);              // 25 bytes in blocks of 7
  const block_span first = plan.span(0);  // the whole head and the file's first 2 bytes
  EXPECT_EQ(first.head_offset, 0u);
  EXPECT_EQ(first.head_bytes, 5u);
  EXPECT_EQ(first.file_offset, 0u);
  EXPECT_EQ(first.file_bytes, 2u);
  std::uint64_t next_file_byte = 2;
  for (std::uint64_t index = 1; index < plan.count; ++index) {
    const block_span span = plan.span(index);
    EXPECT_EQ(span.head_bytes, 0u) << index;
    EXPECT_EQ(span.file_offset, next_file_byte) << index;
    next_file_byte += span.file_bytes;
  }
  EXPECT_EQ(next_file_byte, 20u);
  EXPECT_EQ(plan.span(3).file_bytes, 4u);  // the last block is the shorter one
}

TEST(BlockUpload, AHeadLongerThanABlockIsCutToo) {
  std::string problem;
  const block_plan plan = plan_blocks(10, 0, 4, problem);
  ASSERT_EQ(plan.count, 3u);
  EXPECT_EQ(plan.span(1).head_offset, 4u);
  EXPECT_EQ(plan.span(1).head_bytes, 4u);
  EXPECT_EQ(plan.span(2).head_bytes, 2u);
  EXPECT_EQ(plan.span(2).file_bytes, 0u);
}

TEST(BlockUpload, ABodyNeedingMoreThanFiftyThousandBlocksGetsLargerOnes) {
  std::string problem;
  const block_plan plan = plan_blocks(0, 50000ull * 10 + 1, 10, problem);
  ASSERT_EQ(problem, "");
  EXPECT_EQ(plan.block_bytes, 11u);
  EXPECT_LE(plan.count, max_blocks_per_blob);
  EXPECT_GE(plan.count * plan.block_bytes, plan.total);

  plan_blocks(0, max_blocks_per_blob * max_block_bytes + 1, 10, problem);
  EXPECT_NE(problem.find("body: over the 50,000 blocks"), std::string::npos) << problem;
}

TEST(BlockUpload, IdsHaveOneLengthNoPaddingAndNameTheirUploadAndIndex) {
  const std::string upload = new_upload_name();
  ASSERT_EQ(upload.size(), 18u);
  EXPECT_EQ(upload.find_first_not_of("0123456789abcdef"), std::string::npos);
  const std::string first = block_id(upload, 0);
  const std::string last = block_id(upload, max_blocks_per_blob - 1);
  EXPECT_EQ(first.size(), last.size());  // Azure refuses IDs of different lengths in one blob
  EXPECT_LE(first.size(), 64u);
  EXPECT_EQ(first.find('='), std::string::npos);
  EXPECT_EQ(*base64_decode(first), "s3lect" + upload + "000000");
  EXPECT_EQ(*base64_decode(last), "s3lect" + upload + "049999");
}

TEST(BlockUpload, TwoUploadsNeverShareABlockId) {
  // Two writers of one blob share its uncommitted blocks: a shared ID would let one writer's
  // commit take the other's bytes.
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) names.insert(new_upload_name());
  EXPECT_EQ(names.size(), 1000u);
}

TEST(BlockUpload, TheListCommitsTheUploadsUncommittedBlocksInOrder) {
  const std::string upload = "0123456789abcdef01";
  EXPECT_EQ(block_list_body(upload, 2),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList><Uncommitted>" +
                block_id(upload, 0) + "</Uncommitted><Uncommitted>" + block_id(upload, 1) +
                "</Uncommitted></BlockList>");
}

}  // namespace
}  // namespace s3lect::detail
