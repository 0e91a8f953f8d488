// Torch-facing CUDA backend of models/spmm.h, used only by its front end
// (spmm.cpp) and compiled only against a CUDA LibTorch (DGCN_HAVE_TORCH_CUDA).
#pragma once

#include <ATen/core/Tensor.h>

#include "models/spmm.h"

namespace dgcn::cuda {

// y = op(a) · x on x's device and current stream; a and x on one CUDA device,
// a with int32 indptr/indices (CsrTensor::to converts). x float32 or
// bfloat16, y in out_dtype (float32 or bfloat16), float32 sums (Note [bf16
// SpMM on CUDA] in cusparse_spmm.h).
at::Tensor spmm_cuda(const CsrTensor& a, const at::Tensor& x, bool transpose_a, at::ScalarType out_dtype);
// The CSR of aᵀ, built on the device (cusparseCsr2cscEx2).
CsrTensor transpose_cuda(const CsrTensor& a);

}  // namespace dgcn::cuda
