// Torch-facing CUDA backend of models/gat_kernels.h, used only by its front
// end (gat_kernels.cpp) and compiled only against a CUDA LibTorch
// (DGCN_HAVE_TORCH_CUDA). The adjacency has int32 indptr/indices
// (CsrTensor::to(cuda)); the dense operands are contiguous float32 on its
// device; outputs are allocated by the caller (undefined = not wanted).
#pragma once

#include <ATen/core/Tensor.h>

#include "models/spmm.h"

namespace dgcn::cuda {

void gat_scores_cuda(const CsrTensor& a, const at::Tensor& a_src, const at::Tensor& a_dst, double slope,
                     at::Tensor& e);
// Fills ds and da_dst; returns da_src when `want_src` (else undefined).
at::Tensor gat_scores_backward_cuda(const CsrTensor& a, const at::Tensor& a_src, const at::Tensor& a_dst,
                                    const at::Tensor& de, double slope, at::Tensor& ds, at::Tensor& da_dst,
                                    bool want_src);
void edge_softmax_cuda(const CsrTensor& a, const at::Tensor& e, at::Tensor& alpha);
void edge_softmax_backward_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& dalpha,
                                at::Tensor& de);
void gat_spmm_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& x, at::Tensor& out);
void gat_spmm_backward_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& x,
                            const at::Tensor& dout, at::Tensor& dalpha, at::Tensor& dx);

}  // namespace dgcn::cuda
