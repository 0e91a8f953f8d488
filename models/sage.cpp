#include "models/sage.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/normalization.h>

#include "models/batch_tensors.h"
#include "models/sage_norm.h"

namespace dgcn {

SAGEConvImpl::SAGEConvImpl(int64_t in_features, int64_t out_features, bool bias, bool normalize)
    : in_features_(in_features), out_features_(out_features), normalize_(normalize) {
  TORCH_CHECK(in_features > 0 && out_features > 0, "SAGEConv: features must be positive (got in ",
              in_features, ", out ", out_features, ")");
  lin_l = register_module("lin_l",
                          torch::nn::Linear(torch::nn::LinearOptions(in_features, out_features).bias(bias)));
  lin_r = register_module("lin_r",
                          torch::nn::Linear(torch::nn::LinearOptions(in_features, out_features).bias(false)));
}

void SAGEConvImpl::reset_parameters() {
  // PyG's Linear with its default initializer is torch.nn.Linear's.
  lin_l->reset_parameters();
  lin_r->reset_parameters();
}

at::Tensor SAGEConvImpl::forward(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst) {
  const auto order = choose_aggregation_order(adj.num_rows, adj.num_cols, adj.nnz(), in_features_,
                                              out_features_, is_training(), x.requires_grad());
  return forward_with(adj, x, x_dst, order);
}

at::Tensor SAGEConvImpl::forward_with(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst_in,
                                      AggregationOrder order) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == in_features_, "SAGEConv: x must be [num_src x ", in_features_,
              "] (got ", x.sizes(), ")");
  const at::Tensor x_dst = x_dst_in.defined() ? x_dst_in : x.narrow(0, 0, std::min(adj.num_rows, x.size(0)));
  TORCH_CHECK(x_dst.dim() == 2 && x_dst.size(0) == adj.num_rows && x_dst.size(1) == in_features_,
              "SAGEConv: the dst rows must be [", adj.num_rows, " x ", in_features_, "] (got ", x_dst.sizes(),
              "; x has ", x.size(0), " rows for an adjacency of ", adj.num_rows, " x ", adj.num_cols, ")");
  at::Tensor neigh;
  if (order == AggregationOrder::kAggregateFirst) {
    neigh = lin_l(spmm_autograd(adj, x));
  } else {
    neigh = spmm_autograd(adj, at::matmul(x, lin_l->weight.t()));
    if (lin_l->bias.defined()) neigh = neigh + lin_l->bias;
  }
  at::Tensor out = neigh + lin_r(x_dst);
  if (normalize_) {
    out = torch::nn::functional::normalize(out, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(-1));
  }
  return out;
}

CsrTensor sage_block_adjacency(const Block& block, bool pinned) {
  CsrTensor a = empty_csr(block.num_dst, block.num_src, sage_block_nnz(block), pinned);
  sage_mean_block(block, spans_of(a), intra_op_chunks());
  return a;
}

CsrTensor sage_full_rows_adjacency(const Csr& graph, std::span<const int64_t> rows) {
  CsrTensor a =
      empty_csr(static_cast<int64_t>(rows.size()), graph.num_cols(), sage_full_rows_nnz(graph, rows), false);
  sage_mean_full_rows(graph, rows, spans_of(a), intra_op_chunks());
  return a;
}

}  // namespace dgcn
