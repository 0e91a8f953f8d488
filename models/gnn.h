// The model as a parameter of the engine: what the trainer, the evaluator,
// layer-wise inference, prediction and checkpoints need of a GNN over
// sampled blocks, whatever its layers (GCN, GraphSAGE, GAT), and the one
// factory that builds a model from its options (make_model).
//
// Every model is L message-passing layers over the blocks of a batch, in
// forward order (blocks[0] the widest), with the dst nodes of a block the
// first num_dst of its src nodes (sampling/sampled_batch.h), then an
// optional head. What differs is how a layer wants its block's adjacency
// valued (AdjacencyValues): the tensor bridge (models/batch_tensors.h) and
// the inference chunks (models/inference.h) build those values.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/model_options.h"
#include "models/spmm.h"

namespace dgcn {

// How a model's layers want a block's adjacency (num_dst x num_src) valued.
// All three start from the normalized block of models/gcn_norm.h, whose row
// i lists its self loop (column i) first, then its sampled neighbours.
enum class AdjacencyValues {
  kGcnNormalized,  // Â as models/gcn_norm.h computes it (self loops, degrees, d/k rescaling)
  kMean,           // 1/k_i on each of row i's k_i sampled neighbours, no self loop (an
                   // unbiased estimate of the full neighbour mean; the layer adds the
                   // root term from the dst rows itself): GraphSAGE
  kStructure,      // 1 on the self loop and every neighbour: GAT (its attention weighs them)
};

// The interface every model implements. forward() runs a batch; the pieces
// (layer, activate, head) let layer-wise inference evaluate one layer at a
// time over chunks of rows of the whole graph.
class GnnModel : public torch::nn::Module {
 public:
  // blocks[l] is layer l's adjacency (valued as adjacency_values() says) in
  // forward order; x holds the input rows of blocks[0]'s src nodes. Returns
  // the logits of blocks.back()'s dst nodes (the seeds).
  virtual at::Tensor forward(const std::vector<CsrTensor>& blocks, const at::Tensor& x);

  // Layer l over one block: x [adj.num_cols x in] with the block's dst nodes
  // as its first adj.num_rows rows; returns the activated output (input
  // dropout before layer 0, activate() after).
  virtual at::Tensor layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) = 0;
  // The activation after layer l (activation + dropout for a hidden layer,
  // identity for the output layer).
  virtual at::Tensor activate(int64_t l, const at::Tensor& h) = 0;
  // The head (identity without linear_head).
  virtual at::Tensor head(const at::Tensor& h) = 0;

  virtual int64_t num_layers() const = 0;
  virtual int64_t layer_out_features(int64_t l) const = 0;
  virtual AdjacencyValues adjacency_values() const = 0;
  // Layer l's own parameters (e.g. weight decay on the first layer only).
  virtual std::vector<at::Tensor> layer_parameters(int64_t l) = 0;
  // Whether the first layer of a (num_dst x num_src, nnz) block would read
  // its input rows through the block's columns only, so that a CPU batch may
  // renumber them to the store's rows instead of gathering them (Note [Input
  // gather] in models/batch_tensors.h). A model whose layer also reads the
  // dst rows by position (a root term, attention) answers false.
  virtual bool reads_input_by_columns(int64_t num_dst, int64_t num_src, int64_t nnz) const {
    (void)num_dst, (void)num_src, (void)nnz;
    return false;
  }
  // The dtype of layer l's activations: float32, or bfloat16 under Note
  // [Mixed precision] (models/gcn.h); layer 0's is the one the input rows
  // are kept in.
  virtual at::ScalarType layer_dtype(int64_t l) const {
    (void)l;
    return at::kFloat;
  }

  virtual ModelKind kind() const = 0;
  virtual int64_t in_features() const = 0;
};

using GnnModelPtr = std::shared_ptr<GnnModel>;

// The model `options` describe, its parameters drawn from LibTorch's
// generator as it is now (seed it first for a reproducible model). Throws
// c10::Error on settings the model does not have (heads != 1 or attention
// dropout on a model without attention) or invalid sizes.
GnnModelPtr make_model(const ModelOptions& options);

// `gcn_adjacency` (a block or chunk normalized by models/gcn_norm.h, on the
// CPU: each row's self loop first) valued for `values`; kGcnNormalized
// returns it as it is.
CsrTensor adjacency_for(const CsrTensor& gcn_adjacency, AdjacencyValues values);

// A chunk of rows of a whole graph as a block: the rows' adjacency with
// their own columns first. `adj`'s columns index some [N x F] input h (CPU
// tensors; row i's self loop first, so indices[indptr[i]] is row i's own
// column); `block` renumbers them so that row i's own column is i and the
// other columns follow in order of first appearance, and `rows` lists, for
// each column of `block`, the row of h it reads: layer(l, block,
// h.index_select(0, rows)) computes the chunk as a sampled block would.
struct ChunkBlock {
  CsrTensor block;
  at::Tensor rows;  // int64 [block.num_cols]
};
ChunkBlock chunk_block(const CsrTensor& adj);

}  // namespace dgcn
