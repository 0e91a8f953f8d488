#include "models/gcn_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"
#include "fixtures.h"
#include "models/full_blocks.h"

namespace dgcn {
namespace {

struct Normalized {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  std::vector<float> values;
  NormalizedCsrOut out() { return {indptr, indices, values}; }
};

Normalized normalize(const Block& b, const std::vector<int32_t>& degree, int threads = 2) {
  Normalized n{std::vector<int64_t>(b.num_dst + 1), std::vector<int32_t>(normalized_nnz(b)),
               std::vector<float>(normalized_nnz(b))};
  normalize_block(b, degree, n.out(), fork_join_chunks(threads));
  return n;
}

// The contract's example: seeds {7}, fanouts [2, 1]; 7 -> {3, 9, 4}, 3 -> {7, 5}, 9 -> {1}.
SampledBatch contract_example() {
  SampledBatch b;
  b.num_seeds = 1;
  b.n_id = {7, 3, 9, 5, 1};
  b.num_nodes_per_hop = {1, 2, 2};
  b.num_edges_per_hop = {2, 2};
  b.blocks.push_back(Block{3, 5, {0, 2, 3, 4}, {1, 2, 3, 4}});
  b.blocks.push_back(Block{1, 3, {0, 2}, {1, 2}});
  return b;
}

TEST(GcnNorm, HeaderExampleWeights) {
  // dst 0 (degree 3) sampled {1, 2} with degrees 1 and 3.
  Block b{1, 3, {0, 2}, {1, 2}};
  auto n = normalize(b, {3, 1, 3});
  EXPECT_EQ(n.indptr, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(n.indices, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FLOAT_EQ(n.values[0], 0.25f);
  EXPECT_FLOAT_EQ(n.values[1], 1.5f / std::sqrt(8.0f));
  EXPECT_FLOAT_EQ(n.values[2], 1.5f / 4.0f);
}

TEST(GcnNorm, BatchDegreesFullAndBlock) {
  const SampledBatch b = contract_example();
  std::vector<int32_t> full(10, 0);
  full[7] = 3, full[3] = 2, full[9] = 1, full[5] = 4, full[1] = 6;
  std::vector<int32_t> out(5);
  batch_degrees(b, GcnNorm::kFullGraph, full, out);
  EXPECT_EQ(out, (std::vector<int32_t>{3, 2, 1, 4, 6}));
  batch_degrees(b, GcnNorm::kBlock, full, out);
  // 7 sampled 2, 3 and 9 one each; 5 and 1 are leaves of the last hop.
  EXPECT_EQ(out, (std::vector<int32_t>{2, 1, 1, 0, 0}));
  // Block norm: no rescaling (d = k), leaves count 0 neighbours: weight 1/sqrt(3 * 1).
  auto n = normalize(b.blocks[0], out);
  EXPECT_FLOAT_EQ(n.values[0], 1.0f / 3.0f);
  EXPECT_FLOAT_EQ(n.values[1], 1.0f / std::sqrt(6.0f));  // 7 -> 3: (2+1)(1+1)
  EXPECT_FLOAT_EQ(n.values[4], 1.0f / std::sqrt(2.0f));  // 3 -> 5: (1+1)(0+1)
  std::vector<int32_t> bad_ids(3);
  SampledBatch outside = b;
  outside.n_id[4] = 99;
  EXPECT_THROW(batch_degrees(outside, GcnNorm::kFullGraph, full, out), Error);
}

TEST(GcnNorm, RowsSumToFullGraphRowsWhenNothingIsSampledAway) {
  // On the full neighbourhood the normalized rows equal those of D̃^-1/2 (A+I) D̃^-1/2.
  const GraphStore store = testing::make_store(testing::eight_node_edges());
  const auto degree = store.degrees();
  const SampledBatch batch = testing::full_neighbourhood_batch(store.graph, {2, 6}, 2);
  std::vector<int32_t> d(batch.n_id.size());
  batch_degrees(batch, GcnNorm::kFullGraph, degree, d);
  std::vector<int64_t> rows(batch.n_id.begin(), batch.n_id.begin() + batch.blocks[0].num_dst);
  Normalized full{std::vector<int64_t>(rows.size() + 1),
                  std::vector<int32_t>(full_rows_nnz(store.graph, rows)),
                  std::vector<float>(full_rows_nnz(store.graph, rows))};
  normalize_full_rows(store.graph, degree, rows, full.out(), fork_join_chunks(2));
  auto sampled = normalize(batch.blocks[0], d);
  ASSERT_EQ(sampled.indptr, full.indptr);
  for (size_t e = 0; e < sampled.values.size(); ++e) {
    EXPECT_EQ(batch.n_id[sampled.indices[e]], full.indices[e]);
    EXPECT_FLOAT_EQ(sampled.values[e], full.values[e]);
  }
  // Spot check node 2 (degree 3: 1, 3, 4): self 1/4, to 4 (degree 1) 1/sqrt(4*2).
  EXPECT_FLOAT_EQ(full.values[0], 0.25f);
}

TEST(GcnNorm, SampledRowIsRescaledToAnUnbiasedSum) {
  // Node 0 has degree 4 but 2 sampled neighbours: their weights double.
  Block b{1, 3, {0, 2}, {1, 2}};
  auto n = normalize(b, {4, 4, 4});
  EXPECT_FLOAT_EQ(n.values[1], 2.0f / 5.0f);
  EXPECT_FLOAT_EQ(n.values[0], 1.0f / 5.0f);
}

TEST(GcnNorm, RejectsMoreSampledNeighboursThanTheDegree) {
  Block b{1, 3, {0, 2}, {1, 2}};
  try {
    normalize(b, {1, 1, 1});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 sampled neighbours but degree 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(normalize(b, {4, 4}), Error);  // fewer degrees than src nodes
  EXPECT_EQ(parse_gcn_norm("block"), GcnNorm::kBlock);
  EXPECT_STREQ(gcn_norm_name(parse_gcn_norm("full")), "full");
  EXPECT_THROW(parse_gcn_norm("sym"), Error);
}

}  // namespace
}  // namespace dgcn
