#include "models/sage.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "fixtures.h"
#include "models/full_blocks.h"
#include "models/gat_reference.h"
#include "models/random_parameters.h"
#include "models/sage_norm.h"
#include "sampling/neighbor_sampler.h"

namespace dgcn {
namespace {

// The mean adjacency of a block, dense in double: 1/k for each of row i's k entries.
torch::Tensor dense_mean(const Block& b) {
  auto m = torch::zeros({b.num_dst, b.num_src}, torch::kDouble);
  for (int64_t i = 0; i < b.num_dst; ++i) {
    const int64_t k = b.indptr[i + 1] - b.indptr[i];
    for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) m[i][b.indices[e]] = 1.0 / static_cast<double>(k);
  }
  return m;
}

TEST(SageNorm, RowsAreWeightedByOneOverTheirLength) {
  Block b;
  b.num_dst = 3;
  b.num_src = 6;
  b.indptr = {0, 3, 3, 4};  // row 1 has no neighbours
  b.indices = {1, 2, 5, 0};
  const CsrTensor a = sage_block_adjacency(b);
  EXPECT_EQ(a.nnz(), 4);
  EXPECT_TRUE(torch::equal(a.indices, torch::tensor({1, 2, 5, 0}, torch::kInt)));
  EXPECT_TRUE(torch::allclose(a.values, torch::tensor({1.0F / 3, 1.0F / 3, 1.0F / 3, 1.0F})));
  EXPECT_TRUE(torch::equal(a.indptr, torch::tensor({0, 3, 3, 4}, torch::kLong)));
}

TEST(SageNorm, FullNeighbourhoodBlockEqualsTheFullGraphMean) {
  // With every neighbour sampled, the block's mean is the full graph's
  // 1/degree, the one layer-wise inference uses.
  auto e = testing::eight_node_edges();
  const GraphStore s = testing::make_store(e, 3, 2);
  const auto batch = testing::full_neighbourhood_batch(s.graph, {0, 3, 5}, 1);
  CsrTensor block = sage_block_adjacency(batch.blocks[0]);
  const std::vector<int64_t> rows = {0, 3, 5};
  const CsrTensor full = sage_full_rows_adjacency(s.graph, rows);
  ASSERT_EQ(block.nnz(), full.nnz());
  EXPECT_TRUE(torch::equal(block.indptr, full.indptr));
  EXPECT_TRUE(torch::equal(block.values, full.values));
  for (int64_t k = 0; k < block.nnz(); ++k)
    EXPECT_EQ(batch.n_id[static_cast<size_t>(block.indices[k].item<int32_t>())],
              full.indices[k].item<int32_t>());
}

TEST(SageNorm, SampledMeanIsAnUnbiasedEstimateOfTheFullMean) {
  // Note [SAGE mean of a sampled block]: the hub of a 21-node star, 3 of
  // its 20 neighbours drawn per batch; the average of the sampled means over
  // many batches approaches the full mean (a fixed seed: not flaky).
  const GraphStore s = testing::make_store(testing::star_edges(21), 1, 2);
  std::vector<double> feature(21);
  for (int64_t v = 0; v < 21; ++v) feature[static_cast<size_t>(v)] = static_cast<double>((v * 7) % 11);
  double full = 0;
  for (int64_t v = 1; v < 21; ++v) full += feature[static_cast<size_t>(v)] / 20.0;
  SamplerScratch scratch;
  const std::vector<int64_t> seeds = {0};
  const int64_t draws = 4000;
  double sum = 0;
  double sum_sq = 0;
  for (int64_t d = 0; d < draws; ++d) {
    const auto batch =
        sample_neighbors(s.graph, seeds, SamplerOptions{.fanouts = {3}}, BatchKey{7, 0, d}, scratch);
    const CsrTensor a = sage_block_adjacency(batch.blocks[0]);
    ASSERT_EQ(a.nnz(), 3);
    double mean = 0;
    for (int64_t k = 0; k < 3; ++k)
      mean += a.values[k].item<float>() *
              feature[static_cast<size_t>(batch.n_id[static_cast<size_t>(a.indices[k].item<int32_t>())])];
    sum += mean;
    sum_sq += mean * mean;
  }
  const double avg = sum / draws;
  const double sd = std::sqrt(sum_sq / draws - avg * avg);
  EXPECT_GT(sd, 0.1);  // the draws do vary
  EXPECT_NEAR(avg, full, 4 * sd / std::sqrt(static_cast<double>(draws)));
}

class SageConvTest : public ::testing::TestWithParam<std::tuple<AggregationOrder, bool>> {};

TEST_P(SageConvTest, MatchesTheDenseFormulaWithGradients) {
  const auto [order, normalize] = GetParam();
  torch::manual_seed(2);
  const Block b = testing::random_block(7, 15, 5, 21);
  const CsrTensor adj = sage_block_adjacency(b);
  SAGEConv conv(6, 4, /*bias=*/true, normalize);
  testing::randomize_parameters(*conv);
  auto x = torch::randn({b.num_src, 6}).requires_grad_(true);
  const auto r = torch::randn({b.num_dst, 4});
  auto y = conv->forward_with(adj, x, {}, order);
  (y * r).sum().backward();

  auto xd = x.detach().to(torch::kDouble).requires_grad_(true);
  auto wl = conv->lin_l->weight.detach().to(torch::kDouble).requires_grad_(true);
  auto bl = conv->lin_l->bias.detach().to(torch::kDouble).requires_grad_(true);
  auto wr = conv->lin_r->weight.detach().to(torch::kDouble).requires_grad_(true);
  auto yd = torch::matmul(torch::matmul(dense_mean(b), xd), wl.t()) + bl +
            torch::matmul(xd.narrow(0, 0, b.num_dst), wr.t());
  if (normalize) yd = yd / yd.norm(2, -1, true).clamp_min(1e-12);
  (yd * r.to(torch::kDouble)).sum().backward();

  auto close = [](const torch::Tensor& a, const torch::Tensor& d) {
    return torch::allclose(a.to(torch::kDouble), d, 1e-4, 1e-5);
  };
  EXPECT_TRUE(close(y.detach(), yd.detach()));
  EXPECT_TRUE(close(x.grad(), xd.grad()));
  EXPECT_TRUE(close(conv->lin_l->weight.grad(), wl.grad()));
  EXPECT_TRUE(close(conv->lin_l->bias.grad(), bl.grad()));
  EXPECT_TRUE(close(conv->lin_r->weight.grad(), wr.grad()));
}

INSTANTIATE_TEST_SUITE_P(OrdersAndNormalize, SageConvTest,
                         ::testing::Combine(::testing::Values(AggregationOrder::kAggregateFirst,
                                                              AggregationOrder::kTransformFirst),
                                            ::testing::Bool()));

TEST(SageConv, ExplicitDstRowsAreUsedForTheRootTerm) {
  // With global columns (Note [Input gather]) x is the whole feature matrix
  // and the dst rows come separately; the result is the local one's.
  torch::manual_seed(3);
  const Block b = testing::random_block(4, 9, 4, 5);
  SAGEConv conv(3, 2);
  testing::randomize_parameters(*conv);
  const auto x = torch::randn({b.num_src, 3});
  const CsrTensor adj = sage_block_adjacency(b);
  EXPECT_TRUE(torch::allclose(conv->forward(adj, x), conv->forward(adj, x, x.narrow(0, 0, 4).clone())));
  EXPECT_THROW(conv->forward(adj, x, x.narrow(0, 0, 3)), c10::Error);
}

TEST(SageConv, ParametersCarryPygNames) {
  SAGEConv conv(5, 3);
  const auto params = conv->named_parameters();
  ASSERT_EQ(params.size(), 3U);
  EXPECT_EQ(params["lin_l.weight"].sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(params["lin_l.bias"].sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(params["lin_r.weight"].sizes(), (std::vector<int64_t>{3, 5}));
}

}  // namespace
}  // namespace dgcn
