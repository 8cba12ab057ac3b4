// The tree watcher's label and record (tests/chaos/tree_watch_core.hpp): a job's label is one
// printable line, and the time of a tree's end is never written earlier than it was read.
#include "tree_watch_core.hpp"

#include <gtest/gtest.h>

namespace s3lect::chaos {
namespace {

TEST(ChaosTreeWatch, ALabelIsTheFirstLineInAsManyPiecesAsItCame) {
  tree_label label;
  label.feed("slot1 tree");
  EXPECT_FALSE(label.label());
  EXPECT_EQ(label.problem(), "incomplete");
  label.feed("end node2 7 4242\nanything after the line is ignored\n");
  ASSERT_TRUE(label.label());
  EXPECT_EQ(*label.label(), "slot1 treeend node2 7 4242");
  EXPECT_EQ(label.problem(), "");
}

TEST(ChaosTreeWatch, BadLabelsAreNotRecorded) {
  tree_label empty;
  empty.feed("\n");
  EXPECT_FALSE(empty.label());
  EXPECT_EQ(empty.problem(), "empty");

  tree_label control;
  control.feed("treeend node1 1 1\r\n");
  EXPECT_FALSE(control.label());
  EXPECT_EQ(control.problem(), "not printable");

  tree_label long_label;
  long_label.feed(std::string(tree_label::max_size, 'x'));
  long_label.feed("y\n");
  EXPECT_FALSE(long_label.label());
  EXPECT_EQ(long_label.problem(), "too long");
}

TEST(ChaosTreeWatch, TheRecordIsTheLabelAndTheTimeRoundedUpToAMicrosecond) {
  EXPECT_EQ(tree_end_record("treeend node1 3 11", 1'700'000'000'123'456'000),
            "treeend node1 3 11 1700000000.123456\n");
  EXPECT_EQ(tree_end_record("treeend node1 3 11", 1'700'000'000'123'456'001),
            "treeend node1 3 11 1700000000.123457\n");
  EXPECT_EQ(tree_end_record("treeend node1 3 11", 1'700'000'000'999'999'999),
            "treeend node1 3 11 1700000001.000000\n");
}

}  // namespace
}  // namespace s3lect::chaos
