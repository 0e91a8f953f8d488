#include "models/gat.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixtures.h"
#include "models/gat_adjacency.h"
#include "models/gat_reference.h"
#include "models/random_parameters.h"

namespace dgcn {
namespace {

TEST(GatAdjacency, EveryRowAttendsToItselfExactlyOnce) {
  Block b;
  b.num_dst = 3;
  b.num_src = 6;
  b.indptr = {0, 3, 3, 5};
  b.indices = {3, 0, 4, /*row 2:*/ 2, 5};  // rows 0 and 2 hold a self edge of the graph
  const CsrTensor a = gat_block_adjacency(b);
  EXPECT_EQ(gat_block_nnz(b), 6);
  EXPECT_TRUE(torch::equal(a.indptr, torch::tensor({0, 3, 4, 6}, torch::kLong)));
  EXPECT_TRUE(torch::equal(a.indices, torch::tensor({0, 3, 4, 1, 2, 5}, torch::kInt)));
  EXPECT_TRUE(torch::equal(a.values, torch::ones({6})));
}

TEST(GatAdjacency, FullRowsUseGlobalIdsWithSelfLoops) {
  const GraphStore s = testing::make_store(testing::eight_node_edges(), 3, 2);
  const std::vector<int64_t> rows = {1, 6};
  const CsrTensor a = gat_full_rows_adjacency(s.graph, rows);
  EXPECT_EQ(a.num_cols, s.num_nodes());
  const auto ptr = s.graph.indptr();
  ASSERT_EQ(a.nnz(), s.graph.degree(1) + s.graph.degree(6) + 2);
  EXPECT_EQ(a.indices[0].item<int32_t>(), 1);
  EXPECT_EQ(a.indices[a.indptr[1].item<int64_t>()].item<int32_t>(), 6);
  const auto idx = s.graph.indices<int32_t>();
  for (int64_t t = 0; t < s.graph.degree(1); ++t)
    EXPECT_EQ(a.indices[1 + t].item<int32_t>(), idx[ptr[1] + t]);
}

// GATConv in double on the dense formulation.
torch::Tensor dense_gat(const GATConvImpl& conv, const CsrTensor& adj, const torch::Tensor& x,
                        std::vector<torch::Tensor>& params) {
  const auto& o = conv.options();
  for (const auto& p : {conv.lin->weight, conv.att_src, conv.att_dst, conv.bias})
    params.push_back(p.detach().to(torch::kDouble).requires_grad_(true));
  auto h = torch::matmul(x, params[0].t()).view({x.size(0), o.heads, o.out_features});
  auto a_src = (h * params[1]).sum(-1);
  auto a_dst = (h.narrow(0, 0, adj.num_rows) * params[2]).sum(-1);
  auto alpha = testing::dense_attention(adj, a_src, a_dst, o.negative_slope);
  auto out = torch::einsum("ijh,jhc->ihc", {alpha, h});
  out = o.concat ? out.reshape({adj.num_rows, -1}) : out.mean(1);
  return out + params[3];
}

class GatConvTest : public ::testing::TestWithParam<bool> {};

TEST_P(GatConvTest, MatchesTheDenseFormulaWithGradients) {
  const bool concat = GetParam();
  torch::manual_seed(9);
  const CsrTensor adj = gat_block_adjacency(testing::random_block(8, 17, 6, 4));
  GATConv conv(GatConvOptions{.in_features = 5, .out_features = 3, .heads = 4, .concat = concat});
  testing::randomize_parameters(*conv);
  auto x = torch::randn({adj.num_cols, 5}).requires_grad_(true);
  auto y = conv->forward(adj, x);
  ASSERT_EQ(y.size(1), concat ? 12 : 3);
  const auto r = torch::randn(y.sizes());
  (y * r).sum().backward();

  auto xd = x.detach().to(torch::kDouble).requires_grad_(true);
  std::vector<torch::Tensor> pd;
  auto yd = dense_gat(*conv, adj, xd, pd);
  (yd * r.to(torch::kDouble)).sum().backward();
  auto close = [](const torch::Tensor& a, const torch::Tensor& d) {
    return torch::allclose(a.to(torch::kDouble), d, 1e-4, 1e-5);
  };
  EXPECT_TRUE(close(y.detach(), yd.detach()));
  EXPECT_TRUE(close(x.grad(), xd.grad()));
  EXPECT_TRUE(close(conv->lin->weight.grad(), pd[0].grad()));
  EXPECT_TRUE(close(conv->att_src.grad(), pd[1].grad()));
  EXPECT_TRUE(close(conv->att_dst.grad(), pd[2].grad()));
  EXPECT_TRUE(close(conv->bias.grad(), pd[3].grad()));
}

INSTANTIATE_TEST_SUITE_P(ConcatOrMean, GatConvTest, ::testing::Bool());

TEST(GatConv, InferencePiecesAndExplicitDstRowsAgreeWithForward) {
  // forward folds att into the weight (Note [GAT attention terms from x]);
  // attend() on transformed rows, as layer-wise inference runs it, and an
  // explicit copy of the dst rows give the same result up to rounding.
  torch::manual_seed(12);
  const CsrTensor adj = gat_block_adjacency(testing::random_block(9, 20, 5, 8));
  GATConv conv(GatConvOptions{.in_features = 6, .out_features = 3, .heads = 2});
  testing::randomize_parameters(*conv);
  const auto x = torch::randn({adj.num_cols, 6});
  const auto y = conv->forward(adj, x);
  const auto h = conv->transform(x);
  EXPECT_TRUE(torch::allclose(conv->attend(adj, h, h.narrow(0, 0, adj.num_rows)), y, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(conv->forward(adj, x, x.narrow(0, 0, adj.num_rows).clone()), y, 1e-5, 1e-6));
  EXPECT_THROW(conv->forward(adj, x, x.narrow(0, 0, adj.num_rows - 1)), c10::Error);
}

TEST(GatConv, ParametersCarryPygNamesAndShapes) {
  GATConv conv(GatConvOptions{.in_features = 7, .out_features = 8, .heads = 2, .concat = false});
  const auto params = conv->named_parameters();
  ASSERT_EQ(params.size(), 4U);
  EXPECT_EQ(params["lin.weight"].sizes(), (std::vector<int64_t>{16, 7}));
  EXPECT_EQ(params["att_src"].sizes(), (std::vector<int64_t>{1, 2, 8}));
  EXPECT_EQ(params["att_dst"].sizes(), (std::vector<int64_t>{1, 2, 8}));
  EXPECT_EQ(params["bias"].sizes(), (std::vector<int64_t>{8}));  // mean over heads
  EXPECT_TRUE(torch::equal(params["bias"], torch::zeros({8})));
}

TEST(GatConv, AttentionDropoutOnlyInTrainingAndReproducibleBySeed) {
  torch::manual_seed(1);
  const CsrTensor adj = gat_block_adjacency(testing::random_block(50, 120, 8, 2));
  GATConv conv(GatConvOptions{.in_features = 4, .out_features = 2, .heads = 2, .dropout = 0.5});
  const auto x = torch::randn({adj.num_cols, 4});
  conv->eval();
  const auto clean = conv->forward(adj, x);
  conv->train();
  torch::manual_seed(5);
  const auto dropped = conv->forward(adj, x);
  torch::manual_seed(5);
  const auto again = conv->forward(adj, x);
  EXPECT_FALSE(torch::allclose(clean, dropped));
  EXPECT_TRUE(torch::equal(dropped, again));
  conv->eval();
  EXPECT_TRUE(torch::equal(conv->forward(adj, x), clean));
}

TEST(GatConv, AttentionSumsToOnePerRowAndHead) {
  torch::manual_seed(2);
  const CsrTensor adj = gat_block_adjacency(testing::random_block(30, 70, 9, 3));
  GATConv conv(GatConvOptions{.in_features = 4, .out_features = 2, .heads = 3});
  conv->keep_attention(true);
  conv->forward(adj, torch::randn({adj.num_cols, 4}));
  const auto sums =
      torch::zeros({adj.num_rows, 3}).index_add_(0, testing::entry_rows(adj), conv->last_attention());
  EXPECT_TRUE(torch::allclose(sums, torch::ones({adj.num_rows, 3})));
}

}  // namespace
}  // namespace dgcn
