// See bench/gnn_bench.h.
#include "bench/gnn_bench.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "base/error.h"
#include "bench/device_sync.h"
#include "models/gat.h"
#include "models/gat_kernels.h"
#include "models/sage.h"

namespace dgcn {
namespace {

using bench::sync;

// Layer l of the batch as a sampler Block (blocks nest: a row prefix).
Block layer_block(const ProductsBatch& b, int64_t l) {
  Block block;
  block.num_dst = b.layer_rows(l);
  block.num_src = b.layer_cols(l);
  block.indptr.assign(b.indptr.begin(), b.indptr.begin() + block.num_dst + 1);
  block.indices.assign(b.indices.begin(), b.indices.begin() + b.layer_nnz(l));
  return block;
}

// Best and median of `reps` timed runs of f (after one warm-up), in ms.
nlohmann::json time_ms(int reps, const torch::Device& device, const std::function<void()>& f) {
  f();
  sync(device);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    sync(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {{"best_ms", ms.front()}, {"median_ms", ms[ms.size() / 2]}};
}

// A stack of layers over the blocks: ReLU between them, a sum loss, backward.
template <class Layer>
nlohmann::json time_stack(std::vector<Layer>& layers, const std::vector<CsrTensor>& adj, const at::Tensor& x,
                          int reps, const torch::Device& device) {
  return time_ms(reps, device, [&] {
    at::Tensor h = x;
    for (size_t l = 0; l < layers.size(); ++l) {
      h = layers[l]->forward(adj[l], h);
      if (l + 1 < layers.size()) h = torch::relu(h);
    }
    h.sum().backward();
  });
}

// The gradients of sum(y) for `inputs`, returned rather than accumulated
// into their .grad: adding a [522k x 128] gradient into a leaf's every
// repetition is not work a training step does, so it is not timed.
void grads_of(const at::Tensor& y, const std::vector<at::Tensor>& inputs) {
  torch::autograd::grad({y.sum()}, inputs);
}

}  // namespace

nlohmann::json run_gnn_bench(const GnnBenchOptions& o) {
  DGCN_CHECK(o.reps > 0 && o.features > 0 && o.sage_hidden > 0 && o.gat_heads > 0 && o.gat_hidden > 0 &&
                 o.classes > 0,
             "gnn bench: reps, widths and heads must be positive");
  if (o.threads > 0) at::set_num_threads(o.threads);
  const torch::Device device(o.device);
  DGCN_CHECK(!device.is_cuda() || torch::cuda::is_available(), "gnn bench: --device {} but no GPU is visible",
             o.device);
  torch::manual_seed(1);
  const ProductsBatch batch = products_batch(o.batch);
  const int64_t layers = batch.num_layers();
  std::vector<CsrTensor> sage_adj;
  std::vector<CsrTensor> gat_adj;
  nlohmann::json blocks = nlohmann::json::array();
  for (int64_t l = 0; l < layers; ++l) {
    const Block block = layer_block(batch, l);
    sage_adj.push_back(sage_block_adjacency(block).to(device));
    gat_adj.push_back(gat_block_adjacency(block).to(device));
    blocks.push_back({{"dst", block.num_dst}, {"src", block.num_src}, {"edges", block.num_edges()}});
  }
  const at::Tensor x = torch::randn({batch.layer_cols(0), o.features}).to(device);

  std::vector<SAGEConv> sage;
  std::vector<GATConv> gat;
  for (int64_t l = 0; l < layers; ++l) {
    const bool last = l + 1 == layers;
    sage.emplace_back(l == 0 ? o.features : o.sage_hidden, last ? o.classes : o.sage_hidden);
    // PyG's products GAT: hidden layers concatenate heads, the output layer averages them.
    GatConvOptions g;
    g.in_features = l == 0 ? o.features : o.gat_heads * o.gat_hidden;
    g.out_features = last ? o.classes : o.gat_hidden;
    g.heads = o.gat_heads;
    g.concat = !last;
    gat.emplace_back(g);
    sage.back()->to(device);
    gat.back()->to(device);
  }
  nlohmann::json out = {
      {"benchmark", "gnn"},
      {"device", o.device},
      {"threads", at::get_num_threads()},
      {"batch", {{"seeds", o.batch.seeds}, {"fanouts", o.batch.fanouts}, {"blocks", blocks}}}};
  out["sage"] = time_stack(sage, sage_adj, x, o.reps, device);
  out["sage"]["hidden"] = o.sage_hidden;
  out["gat"] = time_stack(gat, gat_adj, x, o.reps, device);
  out["gat"]["heads"] = o.gat_heads;
  out["gat"]["hidden_per_head"] = o.gat_hidden;

  // The attention kernels alone on the widest block, at the hidden layers' width.
  const CsrTensor& a = gat_adj[0];
  const auto a_src = torch::randn({a.num_cols, o.gat_heads}, x.options()).requires_grad_(true);
  const auto a_dst = torch::randn({a.num_rows, o.gat_heads}, x.options()).requires_grad_(true);
  const auto h = torch::randn({a.num_cols, o.gat_heads, o.gat_hidden}, x.options()).requires_grad_(true);
  at::Tensor e, alpha, y;
  out["gat_kernels"] = {
      {"nnz", a.nnz()},
      {"scores_forward", time_ms(o.reps, device, [&] { e = gat_edge_scores(a, a_src, a_dst); })},
      {"softmax_forward", time_ms(o.reps, device, [&] { alpha = edge_softmax(a, e); })},
      {"spmm_forward", time_ms(o.reps, device, [&] { y = gat_spmm(a, alpha, h); })},
      // Each kernel with its backward (the chain below runs all three).
      {"scores_forward_backward", time_ms(o.reps, device,
                                          [&] {
                                            grads_of(gat_edge_scores(a, a_src, a_dst), {a_src, a_dst});
                                          })},
      {"softmax_forward_backward", time_ms(o.reps, device,
                                           [&] {
                                             const auto ed = e.detach().requires_grad_(true);
                                             grads_of(edge_softmax(a, ed) * e.detach(), {ed});
                                           })},
      {"spmm_forward_backward", time_ms(o.reps, device,
                                        [&] {
                                          const auto w = alpha.detach().requires_grad_(true);
                                          grads_of(gat_spmm(a, w, h), {w, h});
                                        })},
      {"chain_forward_backward",
       time_ms(
           o.reps, device,
           [&] {
             grads_of(gat_spmm(a, edge_softmax(a, gat_edge_scores(a, a_src, a_dst)), h), {a_src, a_dst, h});
           })},
      // The chain as GATConv runs it: the scores' and the SpMM's backward
      // share one transposed pattern (the chain above builds one per op).
      {"chain_shared_transpose_forward_backward", time_ms(o.reps, device, [&] {
         const auto t = make_gat_transpose();
         grads_of(gat_spmm(a, edge_softmax(a, gat_edge_scores(a, a_src, a_dst, 0.2, t)), h, t),
                  {a_src, a_dst, h});
       })}};
  return out;
}

}  // namespace dgcn
