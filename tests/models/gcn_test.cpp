#include "models/gcn.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <cmath>

#include "fixtures.h"
#include "models/batch_tensors.h"
#include "models/full_blocks.h"
#include "models/random_parameters.h"
#include "models/store_features.h"
#include "require_gpu.h"

namespace dgcn {
namespace {

using testing::features_of;

// D̃^-1/2 (A + I) D̃^-1/2 of the whole graph, dense, in double.
torch::Tensor dense_full_adjacency(const GraphStore& s) {
  const int64_t n = s.num_nodes();
  auto a = torch::zeros({n, n}, torch::kDouble);
  const auto deg = s.degrees();
  const auto ptr = s.graph.indptr();
  const auto idx = s.graph.indices<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    a[i][i] = 1.0 / (deg[i] + 1.0);
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e)
      a[i][idx[e]] = 1.0 / std::sqrt((deg[i] + 1.0) * (deg[idx[e]] + 1.0));
  }
  return a;
}

// A graph with varied degrees: the 8-node fixture plus a 12-node star and chords.
GraphStore varied_store() {
  auto e = testing::eight_node_edges();
  e.num_nodes = 20;
  for (int64_t v = 9; v < 20; ++v) e.add(8, v);
  e.add(9, 10), e.add(10, 11), e.add(11, 0), e.add(4, 12), e.add(19, 5);
  return testing::make_store(e, 6, 3);
}

TEST(Gcn, AggregationOrderFollowsTheCost) {
  // First layer of a products-like sampled block: aggregate the 100 features of few dst rows.
  EXPECT_EQ(choose_aggregation_order(140'000, 520'000, 800'000, 100, 128, true, false),
            AggregationOrder::kAggregateFirst);
  // Full graph, wide input (Cora: 1433 -> 16): transform first, aggregate 16 columns.
  EXPECT_EQ(choose_aggregation_order(2708, 2708, 13'264, 1433, 16, true, false),
            AggregationOrder::kTransformFirst);
  // Full graph, 16 -> 7: aggregate the narrower output.
  EXPECT_EQ(choose_aggregation_order(2708, 2708, 13'264, 16, 7, false, true),
            AggregationOrder::kTransformFirst);
  EXPECT_EQ(choose_aggregation_order(2708, 2708, 13'264, 7, 16, false, true),
            AggregationOrder::kAggregateFirst);
}

TEST(Gcn, ConvOrdersAgreeInValueAndGradient) {
  torch::manual_seed(1);
  const GraphStore s = varied_store();
  const auto batch = testing::full_neighbourhood_batch(s.graph, {8, 2}, 1);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  GCNConv conv(6, 5);
  testing::randomize_parameters(*conv);  // a non-zero bias: each order must add it
  const auto x = torch::randn({adj[0].num_cols, 6}).requires_grad_(true);
  const auto r = torch::randn({adj[0].num_rows, 5});
  std::vector<torch::Tensor> outs, grads_x, grads_w, grads_b;
  for (auto order : {AggregationOrder::kAggregateFirst, AggregationOrder::kTransformFirst}) {
    conv->zero_grad();
    x.mutable_grad() = torch::Tensor();
    auto y = conv->forward_with(adj[0], x, order);
    (y * r).sum().backward();
    outs.push_back(y.detach());
    grads_x.push_back(x.grad().clone());
    grads_w.push_back(conv->weight.grad().clone());
    grads_b.push_back(conv->bias.grad().clone());
  }
  EXPECT_TRUE(torch::allclose(outs[0], outs[1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(grads_x[0], grads_x[1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(grads_w[0], grads_w[1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(grads_b[0], grads_b[1], 1e-5, 1e-5));
}

// Central finite differences of a scalar loss against autograd, on every
// entry of `param`.
void expect_gradient_matches(const std::function<torch::Tensor()>& loss, const torch::Tensor& param,
                             const std::string& what, double tol) {
  const auto analytic = param.grad().clone();
  torch::NoGradGuard no_grad;
  const float eps = 1e-2f;
  auto flat = param.view(-1);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const float saved = flat[i].item<float>();
    flat[i] = saved + eps;
    const double up = loss().item<double>();
    flat[i] = saved - eps;
    const double down = loss().item<double>();
    flat[i] = saved;
    EXPECT_NEAR((up - down) / (2 * eps), analytic.view(-1)[i].item<double>(), tol) << what << " entry " << i;
  }
}

TEST(Gcn, ConvGradientsMatchFiniteDifferences) {
  torch::manual_seed(2);
  const GraphStore s = varied_store();
  const auto batch = testing::full_neighbourhood_batch(s.graph, {8, 0, 5}, 1);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  for (auto order : {AggregationOrder::kAggregateFirst, AggregationOrder::kTransformFirst}) {
    GCNConv conv(4, 3);
    testing::randomize_parameters(*conv);
    const auto x = torch::randn({adj[0].num_cols, 4}).requires_grad_(true);
    const auto r = torch::randn({adj[0].num_rows, 3});
    auto loss = [&] { return (conv->forward_with(adj[0], x, order) * r).sum(); };
    loss().backward();
    const std::string name = aggregation_order_name(order);
    expect_gradient_matches(loss, conv->weight, name + " weight", 2e-3);
    expect_gradient_matches(loss, conv->bias, name + " bias", 2e-3);
    expect_gradient_matches(loss, x, name + " x", 2e-3);
  }
}

TEST(Gcn, ModelGradientsMatchFiniteDifferences) {
  torch::manual_seed(3);
  const GraphStore s = varied_store();
  const auto batch = testing::full_neighbourhood_batch(s.graph, {8, 3}, 2);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  const auto x = features_of(s).index_select(0, torch::tensor(batch.n_id));
  for (bool linear_head : {false, true}) {
    GcnOptions o;
    o.in_features = 6, o.hidden = 5, o.num_classes = 3, o.num_layers = 2, o.linear_head = linear_head;
    Gcn model(o);
    testing::randomize_parameters(*model);
    model->eval();  // no dropout: the loss must be a function of the parameters
    auto loss = [&] {
      return torch::nn::functional::cross_entropy(model->forward(adj, x), torch::tensor({0, 2}));
    };
    loss().backward();
    for (const auto& p : model->named_parameters()) expect_gradient_matches(loss, p.value(), p.key(), 3e-3);
  }
}

// Note [GCN normalization of a sampled block]: with every neighbour sampled,
// the sampled forward pass is full-graph GCN at the seeds.
TEST(Gcn, FullNeighbourhoodBlocksGiveFullGraphGcn) {
  torch::manual_seed(4);
  const GraphStore s = varied_store();
  const std::vector<int64_t> seeds{8, 0, 12, 6};
  const auto batch = testing::full_neighbourhood_batch(s.graph, seeds, 2);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  const auto x_all = features_of(s);
  GcnOptions o;
  o.in_features = 6, o.hidden = 7, o.num_classes = 3, o.num_layers = 2;
  Gcn model(o);
  testing::randomize_parameters(*model);  // non-zero biases, which the oracle adds
  model->eval();
  torch::NoGradGuard no_grad;
  const auto got = model->forward(adj, x_all.index_select(0, torch::tensor(batch.n_id)));
  // Dense full-graph GCN with the same parameters.
  const auto a = dense_full_adjacency(s);
  auto params = model->named_parameters();
  auto w1 = params["conv1.weight"].to(torch::kDouble), b1 = params["conv1.bias"].to(torch::kDouble);
  auto w2 = params["conv2.weight"].to(torch::kDouble), b2 = params["conv2.bias"].to(torch::kDouble);
  auto h = torch::relu(a.mm(x_all.to(torch::kDouble)).mm(w1) + b1);
  auto want = (a.mm(h).mm(w2) + b2).index_select(0, torch::tensor(seeds));
  EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), want, 1e-5, 1e-5)) << got << want;
}

// The whole model on the device: same parameters, same batch, the loss and
// every gradient equal to the CPU's (cuSPARSE sums in another order, so to
// float rounding). Skips where no GPU is visible.
TEST(Gcn, CudaForwardAndGradientsMatchCpu) {
  DGCN_SKIP_WITHOUT_GPU();
  torch::manual_seed(6);
  const GraphStore s = varied_store();
  const std::vector<int64_t> seeds{8, 0, 12, 6, 19};
  const auto batch = testing::full_neighbourhood_batch(s.graph, seeds, 3);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  const auto x = features_of(s).index_select(0, torch::tensor(batch.n_id));
  const auto y = torch::tensor({0, 2, 1, 1, 0});
  for (bool linear_head : {false, true}) {
    GcnOptions o;
    o.in_features = 6, o.hidden = 9, o.num_classes = 3, o.num_layers = 3, o.linear_head = linear_head;
    Gcn cpu(o);
    testing::randomize_parameters(*cpu);  // copied to the GPU model below
    Gcn gpu(o);
    const torch::Device device(torch::kCUDA, 0);
    {
      torch::NoGradGuard no_grad;
      auto from = cpu->named_parameters();
      for (auto& p : gpu->named_parameters()) p.value().copy_(from[p.key()]);
    }
    gpu->to(device);
    cpu->eval(), gpu->eval();
    std::vector<CsrTensor> adj_gpu;
    for (const auto& a : adj) adj_gpu.push_back(a.to(device));
    const auto loss_cpu = torch::nn::functional::cross_entropy(cpu->forward(adj, x), y);
    const auto loss_gpu =
        torch::nn::functional::cross_entropy(gpu->forward(adj_gpu, x.to(device)), y.to(device));
    loss_cpu.backward();
    loss_gpu.backward();
    EXPECT_NEAR(loss_gpu.item<double>(), loss_cpu.item<double>(), 1e-5);
    auto want = cpu->named_parameters();
    for (const auto& p : gpu->named_parameters()) {
      EXPECT_TRUE(torch::allclose(p.value().grad().cpu(), want[p.key()].grad(), 1e-4, 1e-5)) << p.key();
    }
  }
}

TEST(Gcn, Structure) {
  GcnOptions o;
  o.in_features = 100, o.hidden = 128, o.num_classes = 47, o.num_layers = 3, o.linear_head = true;
  torch::manual_seed(5);
  Gcn a(o);
  auto names = a->named_parameters().keys();
  EXPECT_EQ(names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                             "conv3.weight", "conv3.bias", "head.weight", "head.bias"}));
  EXPECT_EQ(a->layer_out_features(2), 128);
  o.linear_head = false;
  Gcn c(o);
  EXPECT_EQ(c->layer_out_features(2), 47);
  o.num_layers = 0;
  EXPECT_THROW(Gcn{o}, c10::Error);
}

}  // namespace
}  // namespace dgcn
