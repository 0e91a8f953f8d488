// The three kernels of a GAT layer over a block's adjacency (a CsrTensor of
// num_dst rows and num_src columns, self-loops included: models/gat_adjacency.h;
// its values are not read), for H heads of C features:
//   (a) gat_edge_scores  e[k, h] = LeakyReLU(a_dst[i, h] + a_src[j, h]), k = (i, j)
//   (b) edge_softmax     alpha = softmax of e over each row's entries, per head
//   (c) gat_spmm         out[i, h, :] = sum_k alpha[k, h] x[j, h, :]
// PyG's GATConv computes the same: alpha_j = (x_j · att_src) + (x_i · att_dst),
// leaky_relu, softmax over index i, then the weighted sum of messages.
//
// Each is recorded for autograd (inputs may require grad; the adjacency
// never does) and runs on the CPU (cpu/gat_kernel.h, multithreaded) or CUDA
// (cuda/gat_cuda.h). Deterministic: every output element, forward and
// backward, is summed in a fixed order by one thread; gradients that flow to
// the src side (a_src, x) are row sums over the transposed pattern, built in
// the backward pass like SpMM's (Note [SpMM backward]), never atomics. A
// layer hands (a) and (c) one GatTranspose so that the pattern is transposed
// once per backward pass, not once per op.
//
// Example (H = 1): a row 0 with entries to src 0 and 2, a_dst[0] = 1,
// a_src = [0, 5, -2]: e = [1, -0.2], alpha = [0.769, 0.231],
// out[0] = 0.769 x[0] + 0.231 x[2].
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <utility>

#include "models/spmm.h"

namespace dgcn {

// The transposed pattern of one adjacency, shared by the backward passes of
// the GAT ops given it: gat_edge_scores' a_src gradient and gat_spmm's x
// gradient both sum over the adjacency's columns, so the first of them to run
// builds the transpose (a counting sort over every entry) and the other reuses
// it; it is freed with the autograd graph. CPU only (the CUDA kernels build
// none); an op given none builds its own. One GatTranspose serves one
// adjacency: given another (other indices), an op throws.
struct GatTranspose;
std::shared_ptr<GatTranspose> make_gat_transpose();

// (a) a_src float32 [num_src x H], a_dst float32 [num_dst x H] on adj's
// device -> e float32 [nnz x H].
at::Tensor gat_edge_scores(const CsrTensor& adj, const at::Tensor& a_src, const at::Tensor& a_dst,
                           double negative_slope = 0.2,
                           const std::shared_ptr<GatTranspose>& transpose = nullptr);

// (b) e float32 [nnz x H] -> alpha [nnz x H], max-subtracted, in fp32.
at::Tensor edge_softmax(const CsrTensor& adj, const at::Tensor& e);

// (c) alpha float32 [nnz x H], x float32 [num_src x H x C] -> out float32
// [num_dst x H x C]. Rows of x are read once per entry: x is made
// contiguous first.
at::Tensor gat_spmm(const CsrTensor& adj, const at::Tensor& alpha, const at::Tensor& x,
                    const std::shared_ptr<GatTranspose>& transpose = nullptr);

// The backward of (c) without autograd, for callers that record their own
// (a torch op's autograd formula): dalpha [nnz x H] = <dout[i, h, :], x[j, h, :]>
// per entry, and dx [num_src x H x C] = the transposed weighted sum of dout;
// each undefined when not wanted. Same kernels, same order, as the autograd
// backward of gat_spmm.
std::pair<at::Tensor, at::Tensor> gat_spmm_backward(const CsrTensor& adj, const at::Tensor& alpha,
                                                    const at::Tensor& x, const at::Tensor& dout,
                                                    bool want_alpha = true, bool want_x = true);

// Whether the GAT kernels can run on CUDA tensors in this build.
bool gat_has_cuda();

}  // namespace dgcn
