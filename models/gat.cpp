#include "models/gat.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <cmath>

#include "models/batch_tensors.h"
#include "models/dropout.h"
#include "models/gat_adjacency.h"
#include "models/gat_kernels.h"

namespace dgcn {
namespace {

// PyG's glorot: uniform in ±sqrt(6 / (size(-2) + size(-1))).
void glorot_(at::Tensor& t) {
  const double a = std::sqrt(6.0 / static_cast<double>(t.size(-2) + t.size(-1)));
  torch::NoGradGuard no_grad;
  t.uniform_(-a, a);
}

}  // namespace

GATConvImpl::GATConvImpl(const GatConvOptions& options) : options_(options) {
  TORCH_CHECK(options.in_features > 0 && options.out_features > 0 && options.heads > 0,
              "GATConv: in_features, out_features and heads must be positive (got ", options.in_features,
              ", ", options.out_features, ", ", options.heads, ")");
  TORCH_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "GATConv: dropout must be in [0, 1) (got ",
              options.dropout, ")");
  const int64_t h = options.heads;
  const int64_t c = options.out_features;
  lin = register_module("lin",
                        torch::nn::Linear(torch::nn::LinearOptions(options.in_features, h * c).bias(false)));
  att_src = register_parameter("att_src", torch::empty({1, h, c}));
  att_dst = register_parameter("att_dst", torch::empty({1, h, c}));
  if (options.bias) bias = register_parameter("bias", torch::empty({output_features()}));
  reset_parameters();
}

void GATConvImpl::reset_parameters() {
  glorot_(lin->weight);
  glorot_(att_src);
  glorot_(att_dst);
  if (bias.defined()) {
    torch::NoGradGuard no_grad;
    bias.zero_();
  }
}

at::Tensor GATConvImpl::transform(const at::Tensor& x) const {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == options_.in_features, "GATConv: x must be [n x ",
              options_.in_features, "] (got ", x.sizes(), ")");
  return at::matmul(x, lin->weight.t()).view({x.size(0), options_.heads, options_.out_features});
}

at::Tensor GATConvImpl::attend(const CsrTensor& adj, const at::Tensor& h_src, const at::Tensor& h_dst) {
  TORCH_CHECK(h_dst.size(0) == adj.num_rows, "GATConv: ", h_dst.size(0), " dst rows for an adjacency of ",
              adj.num_rows, " x ", adj.num_cols);
  return attend_with(adj, h_src, (h_src * att_src).sum(-1), (h_dst * att_dst).sum(-1));
}

at::Tensor GATConvImpl::attend_with(const CsrTensor& adj, const at::Tensor& h_src, const at::Tensor& a_src,
                                    const at::Tensor& a_dst) {
  // The scores' and the SpMM's backward passes share one transposed pattern.
  const auto transpose = make_gat_transpose();
  const at::Tensor e = gat_edge_scores(adj, a_src, a_dst, options_.negative_slope, transpose);
  at::Tensor alpha = edge_softmax(adj, e);
  if (keep_attention_) last_attention_ = alpha.detach();
  alpha = dropout_features(alpha, options_.dropout, is_training());
  at::Tensor out = gat_spmm(adj, alpha, h_src, transpose);
  out = options_.concat ? out.reshape({adj.num_rows, options_.heads * options_.out_features}) : out.mean(1);
  if (bias.defined()) out = out + bias;
  return out;
}

// Note [GAT attention terms from x]
// a_src[n, h] = <(x Wᵀ)[n, h, :], att_src[h, :]> = x[n, :] · (Σ_c att_src[h, c] W[h*C + c, :]):
// folding att into W gives an [H x in] matrix and one thin GEMM, instead of
// an [n x H x C] product and its reduction (and, backward, two more passes
// over n x H x C values). On the widest products block (522k src rows, 4 x
// 32) those passes are ~0.8 GB of memory traffic per layer. The sums differ
// from PyG's order only by rounding.
at::Tensor GATConvImpl::forward(const CsrTensor& adj, const at::Tensor& x, const at::Tensor& x_dst_in) {
  const at::Tensor h_src = transform(x);
  if (!x_dst_in.defined()) {
    TORCH_CHECK(x.size(0) >= adj.num_rows, "GATConv: x has ", x.size(0), " rows, fewer than the ",
                adj.num_rows, " dst nodes (the first rows of x)");
  }
  const at::Tensor x_dst = x_dst_in.defined() ? x_dst_in : x.narrow(0, 0, adj.num_rows);
  TORCH_CHECK(x_dst.dim() == 2 && x_dst.size(0) == adj.num_rows && x_dst.size(1) == options_.in_features,
              "GATConv: the dst rows must be [", adj.num_rows, " x ", options_.in_features, "] (got ",
              x_dst.sizes(), ")");
  const auto w = lin->weight.view({options_.heads, options_.out_features, options_.in_features});
  const at::Tensor w_src = (w * att_src.view({options_.heads, options_.out_features, 1})).sum(1);  // [H x in]
  const at::Tensor w_dst = (w * att_dst.view({options_.heads, options_.out_features, 1})).sum(1);
  return attend_with(adj, h_src, at::matmul(x, w_src.t()), at::matmul(x_dst, w_dst.t()));
}

CsrTensor gat_block_adjacency(const Block& block, bool pinned) {
  CsrTensor a = empty_csr(block.num_dst, block.num_src, gat_block_nnz(block), pinned);
  gat_block_structure(block, spans_of(a), intra_op_chunks());
  return a;
}

CsrTensor gat_full_rows_adjacency(const Csr& graph, std::span<const int64_t> rows) {
  CsrTensor a =
      empty_csr(static_cast<int64_t>(rows.size()), graph.num_cols(), gat_full_rows_nnz(graph, rows), false);
  gat_full_rows_structure(graph, rows, spans_of(a), intra_op_chunks());
  return a;
}

}  // namespace dgcn
