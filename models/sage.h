// GraphSAGE over sampled blocks, as PyG's SAGEConv defines it (aggr "mean",
// root_weight on):
//   out_i = lin_l(mean_{j in N(i)} x_j) + lin_r(x_i),  optionally L2-normalized,
// lin_l with a bias, lin_r without. The mean is an SpMM by the block's mean
// adjacency (Note [SAGE mean of a sampled block], models/sage_norm.h), whose
// dst nodes are the first num_dst src nodes, so x_i is x[:num_dst].
// Parameters are named as PyG's (lin_l.weight [out x in], lin_l.bias,
// lin_r.weight), so state dicts map one to one.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <span>

#include "graph/csr.h"
#include "models/gcn.h"
#include "models/spmm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

class SAGEConvImpl : public torch::nn::Module {
 public:
  // normalize: L2-normalize each output row (PyG's `normalize`).
  SAGEConvImpl(int64_t in_features, int64_t out_features, bool bias = true, bool normalize = false);

  // adj: the mean adjacency (num_dst x num_src); x [num_src x in]. x_dst:
  // the dst nodes' own rows [num_dst x in]; undefined means x[:num_dst],
  // pass them when adj's columns are not the block's local ids (e.g. global
  // ids over the store's feature matrix, Note [Input gather]).
  // Returns [num_dst x out]. Aggregates first or transforms first by cost
  // (Note [Aggregation order]; the mean commutes with lin_l's weight).
  at::Tensor forward(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst = {});
  at::Tensor forward_with(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst,
                          AggregationOrder order);
  void reset_parameters();

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool normalize() const { return normalize_; }

  torch::nn::Linear lin_l{nullptr};  // neighbours' mean, with bias
  torch::nn::Linear lin_r{nullptr};  // the node itself, no bias

 private:
  int64_t in_features_;
  int64_t out_features_;
  bool normalize_;
};
TORCH_MODULE(SAGEConv);

// The mean adjacency of `block` as CPU tensors (int64 indptr, int32
// indices, float32 values 1/k): one SAGE layer's SpMM operand.
// `pinned`: page-locked memory, for a non_blocking copy to a GPU.
CsrTensor sage_block_adjacency(const Block& block, bool pinned = false);

// The rows `rows` of the full graph with weights 1/degree, global column ids
// (num_cols = the graph's node count): one chunk of layer-wise inference.
CsrTensor sage_full_rows_adjacency(const Csr& graph, std::span<const int64_t> rows);

}  // namespace dgcn
