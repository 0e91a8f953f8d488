// GraphSAGE and GAT as engine models (models/gnn.h), over the layers of
// models/sage.h and models/gat.h; make_model builds them.
//
// SAGE: L SAGEConv layers (mean aggregation, root weight), ReLU and dropout
// between them, as PyG's GraphSAGE model:
//   x -> [dropout_in] -> conv_1 -> ReLU -> dropout -> ... -> conv_L -> logits
// GAT: L GATConv layers, ELU and dropout between them, as PyG's GAT example
// and Veličković et al.: hidden layers have `heads` heads of `hidden`
// features, concatenated; the output layer one head of num_classes (concat
// off), so --model gat --heads 8 --hidden 8 is the paper's Cora setup.
//   x -> [dropout_in] -> gat_1 -> ELU -> dropout -> ... -> gat_L -> logits
// With linear_head every layer outputs its hidden width (ELU/ReLU + dropout
// after each) and a Linear(width, classes) gives the logits. Layers are
// registered as conv1..convL (and head), as GCN's.
#pragma once

#include <torch/nn/modules/linear.h>

#include <vector>

#include "models/gat.h"
#include "models/gnn.h"
#include "models/sage.h"

namespace dgcn {

// What the two share: the convs (registered as conv1..convL), the optional
// linear head, and the options the model was built from.
template <class Conv>
class ConvStackModel : public GnnModel {
 public:
  at::Tensor head(const at::Tensor& h) override { return head_ ? head_->forward(h) : h; }
  int64_t num_layers() const override { return static_cast<int64_t>(convs_.size()); }
  std::vector<at::Tensor> layer_parameters(int64_t l) override { return conv(l)->parameters(); }
  int64_t in_features() const override { return options_.in_features; }
  Conv& conv(int64_t l) { return convs_.at(static_cast<size_t>(l)); }

 protected:
  explicit ConvStackModel(const ModelOptions& options) : options_(options) {}

  ModelOptions options_;
  std::vector<Conv> convs_;
  torch::nn::Linear head_{nullptr};
};

class SageImpl : public ConvStackModel<SAGEConv> {
 public:
  explicit SageImpl(const ModelOptions& options);

  at::Tensor layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) override;
  at::Tensor activate(int64_t l, const at::Tensor& h) override;
  int64_t layer_out_features(int64_t l) const override;
  AdjacencyValues adjacency_values() const override { return AdjacencyValues::kMean; }
  ModelKind kind() const override { return ModelKind::kSage; }
};

class GatImpl : public ConvStackModel<GATConv> {
 public:
  explicit GatImpl(const ModelOptions& options);

  at::Tensor layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) override;
  at::Tensor activate(int64_t l, const at::Tensor& h) override;
  int64_t layer_out_features(int64_t l) const override;
  AdjacencyValues adjacency_values() const override { return AdjacencyValues::kStructure; }
  ModelKind kind() const override { return ModelKind::kGat; }
};

}  // namespace dgcn
