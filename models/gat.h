// GAT over sampled blocks, as PyG's GATConv defines it (one shared lin,
// add_self_loops, no edge features):
//   h = x · linᵀ viewed [n x H x C]
//   e_ij = LeakyReLU_0.2(<h_j, att_src> + <h_i, att_dst>)   per head
//   alpha_i = softmax of e_i over i's incoming edges, self-loop included
//   out_i = sum_j dropout(alpha_ij) h_j, heads concatenated [H*C] or averaged [C], + bias
// on the kernels of models/gat_kernels.h. The adjacency is a block's GAT
// structure (models/gat_adjacency.h: every dst node once with its
// self-loop); dst nodes are the first num_dst src nodes.
// Parameters are named and shaped as PyG's (lin.weight [H*C x in],
// att_src and att_dst [1 x H x C], bias), so state dicts map one to one.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <span>

#include "graph/csr.h"
#include "models/spmm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

struct GatConvOptions {
  int64_t in_features = 0;
  int64_t out_features = 0;  // C, per head (PyG's out_channels)
  int64_t heads = 1;
  bool concat = true;           // outputs [H*C]; false: the mean over heads, [C]
  double negative_slope = 0.2;  // of the LeakyReLU on the scores
  double dropout = 0.0;         // on the attention weights, in training
  bool bias = true;
};

class GATConvImpl : public torch::nn::Module {
 public:
  explicit GATConvImpl(const GatConvOptions& options);

  // adj: the GAT structure (num_dst x num_src); x [num_src x in]. x_dst: the
  // dst nodes' own rows; undefined means x[:num_dst] (pass them when adj's
  // columns are not the block's local ids). Returns [num_dst x output_features()].
  at::Tensor forward(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst = {});

  // The pieces, for layer-wise inference that transforms all rows once and
  // attends in chunks: h = x · linᵀ as [n x H x C]; then attention and
  // aggregation of adj's rows given the src side h_src (adj.num_cols rows)
  // and the dst side h_dst (adj.num_rows rows), bias included.
  at::Tensor transform(const at::Tensor& x) const;
  at::Tensor attend(const CsrTensor& adj, const at::Tensor& h_src, const at::Tensor& h_dst);
  // alpha [nnz x H] of the last attend() call's softmax (before dropout),
  // kept only when keep_attention(true): for tests and inspection.
  void keep_attention(bool keep) { keep_attention_ = keep; }
  const at::Tensor& last_attention() const { return last_attention_; }

  void reset_parameters();
  const GatConvOptions& options() const { return options_; }
  int64_t output_features() const {
    return options_.concat ? options_.heads * options_.out_features : options_.out_features;
  }

  torch::nn::Linear lin{nullptr};  // [H*C x in], no bias
  at::Tensor att_src;              // [1 x H x C]
  at::Tensor att_dst;              // [1 x H x C]
  at::Tensor bias;                 // [output_features()], undefined without bias

 private:
  // attend() from the attention terms a_src [n_src x H], a_dst [n_dst x H].
  at::Tensor attend_with(const CsrTensor& adj, const at::Tensor& h_src, const at::Tensor& a_src,
                         const at::Tensor& a_dst);

  GatConvOptions options_;
  bool keep_attention_ = false;
  at::Tensor last_attention_;
};
TORCH_MODULE(GATConv);

// The GAT structure of `block` as CPU tensors (int64 indptr, int32 indices,
// float32 values all 1; Note [GAT self-loops]). `pinned`: page-locked
// memory, for a non_blocking copy to a GPU.
CsrTensor gat_block_adjacency(const Block& block, bool pinned = false);

// The rows `rows` of the full graph with their self-loops, global column ids
// (num_cols = the graph's node count): one chunk of layer-wise inference.
CsrTensor gat_full_rows_adjacency(const Csr& graph, std::span<const int64_t> rows);

}  // namespace dgcn
