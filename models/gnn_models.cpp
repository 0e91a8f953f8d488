#include "models/gnn_models.h"

#include <torch/torch.h>

#include <string>

#include "models/dropout.h"

namespace dgcn {
namespace {

void check_common(const ModelOptions& o, const char* name) {
  TORCH_CHECK(o.num_layers >= 1, name, ": needs at least one layer (got ", o.num_layers, ")");
  TORCH_CHECK(o.in_features > 0 && o.num_classes > 0 && o.hidden > 0, name,
              ": in_features, hidden and num_classes must be positive (got ", o.in_features, ", ", o.hidden,
              ", ", o.num_classes, ")");
  TORCH_CHECK(o.dropout >= 0 && o.dropout < 1 && o.input_dropout >= 0 && o.input_dropout < 1, name,
              ": dropout probabilities must be in [0, 1) (got ", o.dropout, ", ", o.input_dropout, ")");
}

// Whether layer l is followed by the activation and dropout (every layer
// but the output layer, which with a head is a hidden layer too).
bool hidden_layer(const ModelOptions& o, int64_t l) {
  return l + 1 < o.num_layers || o.linear_head;
}

}  // namespace

SageImpl::SageImpl(const ModelOptions& options) : ConvStackModel(options) {
  check_common(options, "sage");
  int64_t in = options.in_features;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    const int64_t out = hidden_layer(options, l) ? options.hidden : options.num_classes;
    convs_.push_back(register_module("conv" + std::to_string(l + 1), SAGEConv(in, out)));
    in = out;
  }
  if (options.linear_head)
    head_ = register_module("head", torch::nn::Linear(options.hidden, options.num_classes));
}

at::Tensor SageImpl::layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) {
  TORCH_CHECK(l >= 0 && l < num_layers(), "sage: no layer ", l, " (the model has ", num_layers(), ")");
  at::Tensor h = l == 0 ? dropout_features(x, options_.input_dropout, is_training()) : x;
  return activate(l, convs_[static_cast<size_t>(l)]->forward(adj, h));
}

at::Tensor SageImpl::activate(int64_t l, const at::Tensor& h) {
  return hidden_layer(options_, l) ? relu_dropout(h, options_.dropout, is_training()) : h;
}

int64_t SageImpl::layer_out_features(int64_t l) const {
  return convs_.at(static_cast<size_t>(l))->out_features();
}

GatImpl::GatImpl(const ModelOptions& options) : ConvStackModel(options) {
  check_common(options, "gat");
  TORCH_CHECK(options.heads >= 1, "gat: needs at least one attention head (got ", options.heads, ")");
  TORCH_CHECK(options.attention_dropout >= 0 && options.attention_dropout < 1,
              "gat: attention dropout must be in [0, 1) (got ", options.attention_dropout, ")");
  int64_t in = options.in_features;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    GatConvOptions c;
    c.in_features = in;
    c.dropout = options.attention_dropout;
    if (hidden_layer(options, l)) {
      c.out_features = options.hidden;
      c.heads = options.heads;
      c.concat = true;
    } else {
      // The output layer: one head of the classes (the paper's Cora setup).
      c.out_features = options.num_classes;
      c.heads = 1;
      c.concat = false;
    }
    convs_.push_back(register_module("conv" + std::to_string(l + 1), GATConv(c)));
    in = convs_.back()->output_features();
  }
  if (options.linear_head)
    head_ = register_module("head", torch::nn::Linear(options.hidden * options.heads, options.num_classes));
}

at::Tensor GatImpl::layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) {
  TORCH_CHECK(l >= 0 && l < num_layers(), "gat: no layer ", l, " (the model has ", num_layers(), ")");
  at::Tensor h = l == 0 ? dropout_features(x, options_.input_dropout, is_training()) : x;
  return activate(l, convs_[static_cast<size_t>(l)]->forward(adj, h));
}

at::Tensor GatImpl::activate(int64_t l, const at::Tensor& h) {
  if (!hidden_layer(options_, l)) return h;
  return dropout_features(torch::elu(h), options_.dropout, is_training());
}

int64_t GatImpl::layer_out_features(int64_t l) const {
  return convs_.at(static_cast<size_t>(l))->output_features();
}

}  // namespace dgcn
