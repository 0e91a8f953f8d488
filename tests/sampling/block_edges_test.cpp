#include "sampling/block_edges.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace dgcn {
namespace {

// sampling/sampled_batch.h's example: blocks[0] of seeds {7}, fanouts [2, 1].
Block example_block() {
  Block block;
  block.num_dst = 3;
  block.num_src = 5;
  block.indptr = {0, 2, 3, 4};
  block.indices = {1, 2, 3, 4};
  return block;
}

TEST(BlockEdges, GivesTheEdgesSortedByTargetAndTheirPointerOverEveryNode) {
  const Block block = example_block();
  std::vector<int64_t> src(4, -7), dst(4, -7), colptr(6, -7);
  block_to_edge_index(block, 5, src, dst, colptr);
  EXPECT_EQ(src, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(dst, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(colptr, (std::vector<int64_t>{0, 2, 3, 4, 4, 4}));
}

TEST(BlockEdges, AnEmptyRowKeepsItsPointerAndNoEdgeLeavesAllZero) {
  Block block;
  block.num_dst = 3;
  block.num_src = 3;
  block.indptr = {0, 1, 1, 2};
  block.indices = {2, 0};
  std::vector<int64_t> src(2), dst(2), colptr(4);
  block_to_edge_index(block, 3, src, dst, colptr);
  EXPECT_EQ(src, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(dst, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(colptr, (std::vector<int64_t>{0, 1, 1, 2}));

  Block none;
  none.num_dst = 2;
  none.num_src = 2;
  none.indptr = {0, 0, 0};
  std::vector<int64_t> no_edges, ptr(3, 9);
  block_to_edge_index(none, 2, no_edges, no_edges, ptr);
  EXPECT_EQ(ptr, (std::vector<int64_t>{0, 0, 0}));
}

TEST(BlockEdges, RefusesSpansOfTheWrongSize) {
  const Block block = example_block();
  std::vector<int64_t> src(4), dst(4), colptr(6), short_edges(3), short_ptr(5);
  EXPECT_THROW(block_to_edge_index(block, 5, short_edges, dst, colptr), Error);
  EXPECT_THROW(block_to_edge_index(block, 5, src, short_edges, colptr), Error);
  EXPECT_THROW(block_to_edge_index(block, 5, src, dst, short_ptr), Error);
  EXPECT_THROW(block_to_edge_index(block, 2, src, dst, colptr), Error);  // fewer nodes than rows
}

}  // namespace
}  // namespace dgcn
