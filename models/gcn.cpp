#include "models/gcn.h"

#include <torch/nn/init.h>
#include <torch/torch.h>

#include "models/dropout.h"

namespace dgcn {

const char* aggregation_order_name(AggregationOrder order) {
  return order == AggregationOrder::kAggregateFirst ? "aggregate-first" : "transform-first";
}

AggregationOrder choose_aggregation_order(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t in_features,
                                          int64_t out_features, bool training, bool input_requires_grad) {
  const double s = kSparseToDenseCost;
  const double e = static_cast<double>(nnz);
  const double in = static_cast<double>(in_features);
  const double out = static_cast<double>(out_features);
  const double dense_dst = static_cast<double>(num_dst) * in * out;
  const double dense_src = static_cast<double>(num_src) * in * out;
  // Forward: the SpMM and the GEMM of each order.
  double aggregate_first = s * e * in + dense_dst;
  double transform_first = dense_src + s * e * out;
  if (training) {
    // Aggregate-first: dW = zᵀ·dy; for dx also dz = dy·Wᵀ and Âᵀ·dz (plus building Âᵀ).
    aggregate_first += dense_dst;
    if (input_requires_grad) aggregate_first += dense_dst + s * e * (in + 1);
    // Transform-first: dh = Âᵀ·dy (always, W needs it), dW = xᵀ·dh, dx = dh·Wᵀ.
    transform_first += s * e * (out + 1) + dense_src;
    if (input_requires_grad) transform_first += dense_src;
  }
  return transform_first < aggregate_first ? AggregationOrder::kTransformFirst
                                           : AggregationOrder::kAggregateFirst;
}

GCNConvImpl::GCNConvImpl(int64_t in_features, int64_t out_features, bool bias)
    : in_features_(in_features), out_features_(out_features) {
  TORCH_CHECK(in_features > 0 && out_features > 0, "GCNConv: feature sizes must be positive (got ",
              in_features, " -> ", out_features, ")");
  weight = register_parameter("weight", torch::empty({in_features, out_features}));
  if (bias) this->bias = register_parameter("bias", torch::empty({out_features}));
  reset_parameters();
}

void GCNConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  // Glorot/Xavier uniform over [in x out], as PyG's GCNConv.
  torch::nn::init::xavier_uniform_(weight);
  if (bias.defined()) bias.zero_();
}

AggregationOrder GCNConvImpl::order_for(int64_t num_dst, int64_t num_src, int64_t nnz,
                                        bool input_requires_grad) const {
  const bool training = is_training() && torch::GradMode::is_enabled();
  return choose_aggregation_order(num_dst, num_src, nnz, in_features_, out_features_, training,
                                  input_requires_grad);
}

at::Tensor GCNConvImpl::forward(const CsrTensor& adj, const at::Tensor& x) {
  return forward_with(adj, x, order_for(adj.num_rows, adj.num_cols, adj.nnz(), x.requires_grad()));
}

void GCNConvImpl::check_input(const CsrTensor& adj, const at::Tensor& x) const {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == in_features_, "GCNConv: x must be [num_src x ", in_features_,
              "] (got ", x.sizes(), ")");
  TORCH_CHECK(x.size(0) == adj.num_cols, "GCNConv: x has ", x.size(0), " rows but the block has ",
              adj.num_cols, " src nodes");
}

at::Tensor GCNConvImpl::product(const CsrTensor& adj, const at::Tensor& x, AggregationOrder order) const {
  if (order == AggregationOrder::kAggregateFirst)
    return torch::mm(aggregate(adj, to_compute(x)), to_compute(weight));
  return aggregate(adj, transform(x));
}

at::Tensor GCNConvImpl::forward_without_bias(const CsrTensor& adj, const at::Tensor& x) {
  check_input(adj, x);
  return product(adj, x, order_for(adj.num_rows, adj.num_cols, adj.nnz(), x.requires_grad()));
}

at::Tensor GCNConvImpl::forward_with(const CsrTensor& adj, const at::Tensor& x, AggregationOrder order) {
  check_input(adj, x);
  if (order == AggregationOrder::kAggregateFirst && bias.defined()) {  // the bias inside the GEMM
    return torch::addmm(to_compute(bias), aggregate(adj, to_compute(x)), to_compute(weight));
  }
  return add_bias(product(adj, x, order));
}

at::ScalarType GCNConvImpl::compute_dtype() const {
  return dgcn::compute_dtype(precision_);
}

at::Tensor GCNConvImpl::to_compute(const at::Tensor& t) const {
  return t.scalar_type() == compute_dtype() ? t : t.to(compute_dtype());
}

at::Tensor GCNConvImpl::transform(const at::Tensor& x) const {
  return torch::mm(to_compute(x), to_compute(weight));
}

at::Tensor GCNConvImpl::aggregate(const CsrTensor& adj, const at::Tensor& h) const {
  // bf16 rows are read as they are and summed in fp32, the result rounded
  // once to bf16 (Note [bf16 SpMM] in models/cpu/spmm_kernel.h).
  return spmm_autograd(adj, h, spmm_backward_);
}

at::Tensor GCNConvImpl::add_bias(const at::Tensor& y) const {
  return bias.defined() ? y + to_compute(bias) : y;
}

GcnImpl::GcnImpl(const GcnOptions& options) : options_(options) {
  TORCH_CHECK(options.num_layers >= 1, "Gcn: needs at least one layer (got ", options.num_layers, ")");
  TORCH_CHECK(options.in_features > 0 && options.num_classes > 0 && options.hidden > 0,
              "Gcn: in_features, hidden and num_classes must be positive (got ", options.in_features, ", ",
              options.hidden, ", ", options.num_classes, ")");
  TORCH_CHECK(
      options.dropout >= 0 && options.dropout < 1 && options.input_dropout >= 0 && options.input_dropout < 1,
      "Gcn: dropout probabilities must be in [0, 1) (got ", options.dropout, ", ", options.input_dropout,
      ")");
  int64_t in = options.in_features;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    const bool last = l + 1 == options.num_layers;
    const int64_t out = last && !options.linear_head ? options.num_classes : options.hidden;
    convs_.push_back(register_module("conv" + std::to_string(l + 1), GCNConv(in, out)));
    convs_.back()->set_precision(options.precision);
    in = out;
  }
  if (options.linear_head)
    head_ = register_module("head", torch::nn::Linear(options.hidden, options.num_classes));
}

bool GcnImpl::reads_input_by_columns(int64_t num_dst, int64_t num_src, int64_t nnz) const {
  return convs_.front()->order_for(num_dst, num_src, nnz, /*input_requires_grad=*/false) ==
         AggregationOrder::kAggregateFirst;
}

void GcnImpl::set_spmm_backward(SpmmBackward mode) {
  for (auto& conv : convs_) conv->set_spmm_backward(mode);
}

at::Tensor GcnImpl::layer(int64_t l, const CsrTensor& adj, const at::Tensor& x) {
  TORCH_CHECK(l >= 0 && l < num_layers(), "Gcn: no layer ", l, " (the model has ", num_layers(), ")");
  at::Tensor h = x;
  if (l == 0) h = dropout_features(h, options_.input_dropout, is_training());
  GCNConv& c = convs_[static_cast<size_t>(l)];
  // bf16 training fuses the bias into the activation (Note [Fused bias,
  // ReLU and dropout]); fp32 keeps LibTorch's bias gradient, bit for bit.
  if (hidden(l) && c->bias.defined() && options_.precision == Precision::kBf16 && is_training())
    return bias_relu_dropout(c->forward_without_bias(adj, h), c->bias, options_.dropout, true);
  return activate(l, c->forward(adj, h));
}

bool GcnImpl::hidden(int64_t l) const {
  return l + 1 < num_layers() || options_.linear_head;
}

at::Tensor GcnImpl::activate(int64_t l, const at::Tensor& h) {
  return hidden(l) ? relu_dropout(h, options_.dropout, is_training()) : h;
}

at::Tensor GcnImpl::head(const at::Tensor& h) {
  if (options_.precision == Precision::kFp32) return head_ ? head_->forward(h) : h;
  // Note [Mixed precision]: the head's product in bf16, the logits in fp32.
  const GCNConvImpl& last = *convs_.back();
  at::Tensor out = h;
  if (head_) {
    out = torch::nn::functional::linear(last.to_compute(h), last.to_compute(head_->weight),
                                        last.to_compute(head_->bias));
  }
  return out.to(at::kFloat);
}

at::Tensor GcnImpl::forward(const std::vector<CsrTensor>& blocks, const at::Tensor& x) {
  TORCH_CHECK(static_cast<int64_t>(blocks.size()) == num_layers(), "Gcn: got ", blocks.size(),
              " blocks for a model with ", num_layers(), " GCN layers (one fanout per layer)");
  at::Tensor h = x;
  for (int64_t l = 0; l < num_layers(); ++l) {
    const CsrTensor& adj = blocks[static_cast<size_t>(l)];
    // Layer l reads the first num_src rows of the previous output (the dst
    // nodes of a block are a prefix of its src nodes, and blocks nest).
    if (h.size(0) != adj.num_cols) {
      TORCH_CHECK(h.size(0) > adj.num_cols, "Gcn: layer ", l, " needs ", adj.num_cols, " input rows, got ",
                  h.size(0));
      h = h.narrow(0, 0, adj.num_cols);
    }
    h = layer(l, adj, h);
  }
  return head(h);
}

}  // namespace dgcn
