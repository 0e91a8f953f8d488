// GCN layers and the GCN model over sampled blocks.
//
// A block's adjacency arrives as a CsrTensor Â (num_dst x num_src) already
// normalized (models/gcn_norm.h: self-loops, degrees, d/k rescaling), with
// the dst nodes the first num_dst src nodes. A layer computes Â · x · W + b.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/gnn.h"
#include "models/precision.h"
#include "models/spmm.h"

namespace dgcn {

// Note [Aggregation order]
// Â · x · W can be evaluated as (Â · x) · W (aggregate first) or Â · (x · W)
// (transform first). Dense work scales with the rows transformed (num_dst
// vs num_src), sparse work with the width aggregated (in vs out features).
// In sampled blocks num_dst ≪ num_src (products, [15,10,5]: ~140k of ~520k
// in the first layer), so aggregating first usually wins even when it
// aggregates the wider side; on full graphs (num_dst == num_src) the
// narrower side is aggregated. The choice counts backward work too: with
// aggregate-first and an input that needs no gradient (the features) the
// transposed SpMM disappears, while transform-first always needs it (for W).
enum class AggregationOrder { kAggregateFirst, kTransformFirst };

// Note [Mixed precision]
// With Precision::kBf16 (models/precision.h) a layer computes in bfloat16:
// its input (the features arrive in bf16 already, converted once at load;
// fp32 rows are cast here), the SpMM's rows (summed in fp32), the dense
// products (LibTorch's bf16 GEMM: oneDNN, AMX where the CPU has it) and its
// output. The parameters stay fp32, the master copy the optimizer updates:
// the layer casts them to bf16 inside forward, so autograd's cast node hands
// back fp32 gradients (and the all-reduce averages fp32). The model's
// logits are cast back to fp32 for the loss and the metrics (GcnImpl::head).
// With kFp32 every cast is skipped: the fp32 model is unchanged bit for bit.

// The dtype of features and activations under `p`: float32 or bfloat16.
// Where the features tensor is made, `t.to(compute_dtype(p))` converts it
// once (and is t itself under fp32).
inline at::ScalarType compute_dtype(Precision p) {
  return p == Precision::kBf16 ? at::kBFloat16 : at::kFloat;
}
const char* aggregation_order_name(AggregationOrder order);  // "aggregate-first", "transform-first"

// Cost of one sparse multiply-add (one entry, one feature) in units of one
// dense multiply-add: SpMM streams random rows at a few GB/s per core, GEMM
// runs tens of GFLOP/s per core.
constexpr double kSparseToDenseCost = 4.0;

// The order with the lower estimated work (forward, plus backward when
// `training`); ties go to aggregate-first.
AggregationOrder choose_aggregation_order(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t in_features,
                                          int64_t out_features, bool training, bool input_requires_grad);

// One GCN layer: out [num_dst x out] = Â · x · W + b for x [num_src x in].
// W is Glorot-initialized, b zero (PyG's GCNConv defaults).
class GCNConvImpl : public torch::nn::Module {
 public:
  GCNConvImpl(int64_t in_features, int64_t out_features, bool bias = true);
  // Chooses the order by cost (choose_aggregation_order).
  at::Tensor forward(const CsrTensor& adj, const at::Tensor& x);
  // With a fixed order (tests compare the two).
  at::Tensor forward_with(const CsrTensor& adj, const at::Tensor& x, AggregationOrder order);
  // forward() without the bias (the model adds it fused with the activation:
  // Note [Fused bias, ReLU and dropout] in models/dropout.h).
  at::Tensor forward_without_bias(const CsrTensor& adj, const at::Tensor& x);
  // The order forward() takes for a block of this shape in the current mode.
  AggregationOrder order_for(int64_t num_dst, int64_t num_src, int64_t nnz, bool input_requires_grad) const;
  void reset_parameters();

  // The pieces, for layer-wise inference that transforms all rows once and
  // aggregates in chunks: x · W, Â · h (autograd-aware), y + b.
  at::Tensor transform(const at::Tensor& x) const;
  at::Tensor aggregate(const CsrTensor& adj, const at::Tensor& h) const;
  at::Tensor add_bias(const at::Tensor& y) const;

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  // How the backward pass multiplies by Âᵀ (Note [SpMM backward]).
  void set_spmm_backward(SpmmBackward mode) { spmm_backward_ = mode; }
  // The arithmetic of forward (Note [Mixed precision]); fp32 by default.
  void set_precision(Precision p) { precision_ = p; }
  Precision precision() const { return precision_; }
  // The dtype of this layer's activations: float32 or bfloat16.
  at::ScalarType compute_dtype() const;
  // t in the compute dtype (t itself when it has it already).
  at::Tensor to_compute(const at::Tensor& t) const;

  at::Tensor weight;  // [in x out]
  at::Tensor bias;    // [out], undefined without bias

 private:
  void check_input(const CsrTensor& adj, const at::Tensor& x) const;
  // Â · x · W in the given order, without the bias.
  at::Tensor product(const CsrTensor& adj, const at::Tensor& x, AggregationOrder order) const;

  int64_t in_features_;
  int64_t out_features_;
  SpmmBackward spmm_backward_ = SpmmBackward::kTransposedCsr;
  Precision precision_ = Precision::kFp32;
};
TORCH_MODULE(GCNConv);

struct GcnOptions {
  int64_t in_features = 0;
  int64_t hidden = 128;
  int64_t num_classes = 0;
  int64_t num_layers = 2;                  // GCN layers = number of fanouts
  double dropout = 0.5;                    // after every hidden ReLU
  double input_dropout = 0.0;              // on the input features (Kipf & Welling use 0.5 on Cora)
  bool linear_head = false;                // a final Linear(hidden, classes) after the last GCN layer
  Precision precision = Precision::kFp32;  // Note [Mixed precision]
};

// L GCN layers with ReLU and dropout between them:
//   x -> [dropout_in] -> conv_1 -> ReLU -> dropout -> ... -> conv_L -> logits
// or, with linear_head, every conv_l outputs `hidden` (ReLU + dropout after
// each) and a Linear(hidden, classes) gives the logits. One of the engine's
// models (models/gnn.h); its blocks are the normalized Â.
class GcnImpl : public GnnModel {
 public:
  explicit GcnImpl(const GcnOptions& options);

  // blocks[l] is layer l's normalized adjacency in forward order (blocks[0]
  // the widest); x holds the input features of blocks[0]'s src nodes. Returns
  // the logits of blocks.back()'s dst nodes (the seeds).
  at::Tensor forward(const std::vector<CsrTensor>& blocks, const at::Tensor& x) override;

  // The pieces of forward, for layer-wise inference: layer l (with input
  // dropout before layer 0, then activate()), the activation after layer l
  // (ReLU + dropout for hidden layers, identity for the output layer) and the
  // head (identity without linear_head).
  at::Tensor layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) override;
  at::Tensor activate(int64_t l, const at::Tensor& h) override;
  at::Tensor head(const at::Tensor& h) override;
  GCNConv& conv(int64_t l) { return convs_.at(static_cast<size_t>(l)); }

  int64_t num_layers() const override { return static_cast<int64_t>(convs_.size()); }
  int64_t layer_out_features(int64_t l) const override {
    return convs_.at(static_cast<size_t>(l))->out_features();
  }
  AdjacencyValues adjacency_values() const override { return AdjacencyValues::kGcnNormalized; }
  std::vector<at::Tensor> layer_parameters(int64_t l) override { return conv(l)->parameters(); }
  // Aggregating first, the first layer reads its input only through Â's columns.
  bool reads_input_by_columns(int64_t num_dst, int64_t num_src, int64_t nnz) const override;
  at::ScalarType layer_dtype(int64_t l) const override {
    return convs_.at(static_cast<size_t>(l))->compute_dtype();
  }
  ModelKind kind() const override { return ModelKind::kGcn; }
  int64_t in_features() const override { return options_.in_features; }
  const GcnOptions& options() const { return options_; }
  void set_spmm_backward(SpmmBackward mode);

 private:
  // Whether layer l is followed by ReLU and dropout (every layer but the
  // output layer, which with a head is a hidden layer too).
  bool hidden(int64_t l) const;

  GcnOptions options_;
  std::vector<GCNConv> convs_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Gcn);

}  // namespace dgcn
