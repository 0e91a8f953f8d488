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

// The example block as a batch of 5 nodes with global ids.
SampledBatch example_batch() {
  SampledBatch batch;
  batch.num_seeds = 1;
  batch.n_id = {7, 2, 9, 0, 4};
  batch.blocks = {example_block()};
  return batch;
}

TEST(PygArrays, LayOutTheBatchWithDegreesLabelsAndMasks) {
  const SampledBatch batch = example_batch();
  const std::vector<int32_t> degree = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const std::vector<int32_t> classes = {0, 1, 2, 3, 4, 5, 6, -1, 8, 9};
  // Node 7: train; 2: val; 9: test; 0: train and test; 4: none.
  std::vector<uint8_t> bits(10, 0);
  bits[7] = 1, bits[2] = 2, bits[9] = 4, bits[0] = 5;
  auto pool = BatchMemoryPool::create(2);
  const PygArrays a = lay_out_for_pyg(batch, degree, {.classes = classes, .split_bits = bits}, *pool);
  EXPECT_EQ(std::vector<int64_t>(a.n_id.begin(), a.n_id.end()), batch.n_id);
  EXPECT_EQ(std::vector<int64_t>(a.src.begin(), a.src.end()), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(a.dst.begin(), a.dst.end()), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(a.src.data() + a.src.size(), a.dst.data());  // edge_index [2, m] in one piece
  EXPECT_EQ(std::vector<int64_t>(a.colptr.begin(), a.colptr.end()), (std::vector<int64_t>{0, 2, 3, 4, 4, 4}));
  EXPECT_EQ(std::vector<int32_t>(a.degree.begin(), a.degree.end()),
            (std::vector<int32_t>{17, 12, 19, 10, 14}));
  EXPECT_EQ(std::vector<int64_t>(a.y.begin(), a.y.end()), (std::vector<int64_t>{-1, 2, 9, 0, 4}));
  const std::vector<bool> masks(a.masks.begin(), a.masks.end());
  EXPECT_EQ(masks, (std::vector<bool>{1, 0, 0, 1, 0, /* train */
                                      0, 1, 0, 0, 0, /* val */
                                      0, 0, 1, 1, 0 /* test */}));
  ASSERT_TRUE(a.lease);
}

TEST(PygArrays, TakeFetchedDegreesAndLeaveLabelsOutWithoutThem) {
  SampledBatch batch = example_batch();
  batch.degrees = {3, 4, 5, 6, 7};  // a partition's, fetched from the owners
  auto pool = BatchMemoryPool::create(2);
  const PygArrays a = lay_out_for_pyg(batch, {}, {}, *pool);
  EXPECT_EQ(std::vector<int32_t>(a.degree.begin(), a.degree.end()), batch.degrees);
  EXPECT_TRUE(a.y.empty());
  EXPECT_TRUE(a.masks.empty());
}

TEST(PygArrays, RefuseNodesOutsideTheirDegreesOrLabels) {
  const SampledBatch batch = example_batch();  // node 9 is the largest
  const std::vector<int32_t> nine(9, 1), ten(10, 1);
  const std::vector<uint8_t> bits9(9, 0), bits10(10, 0);
  auto pool = BatchMemoryPool::create(2);
  EXPECT_THROW(lay_out_for_pyg(batch, nine, {}, *pool), Error);
  EXPECT_THROW(lay_out_for_pyg(batch, ten, {.classes = nine, .split_bits = bits9}, *pool), Error);
  EXPECT_THROW(lay_out_for_pyg(batch, ten, {.classes = ten, .split_bits = bits9}, *pool), Error);
  EXPECT_NO_THROW(lay_out_for_pyg(batch, ten, {.classes = ten, .split_bits = bits10}, *pool));
}

}  // namespace
}  // namespace dgcn
