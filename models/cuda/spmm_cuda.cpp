// Compiled only with a CUDA LibTorch (see cmake/DgcnCuda.cmake): binds
// tensors, the current device and the current stream to the plain cuSPARSE
// layer in cusparse_spmm.h.
#include "models/cuda/spmm_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <memory>
#include <vector>

#include "models/cuda/cusparse_spmm.h"

namespace dgcn::cuda {
namespace {

// One handle per (thread, device): cuSPARSE handles must not be
// shared by threads that set different streams on them.
CusparseSpmm& context_for(c10::DeviceIndex device) {
  thread_local std::vector<std::unique_ptr<CusparseSpmm>> per_device;
  const auto i = static_cast<size_t>(device);
  if (i >= per_device.size()) per_device.resize(i + 1);
  if (!per_device[i]) per_device[i] = std::make_unique<CusparseSpmm>();  // on the guarded device
  return *per_device[i];
}

DeviceCsr device_csr(const CsrTensor& a) {
  TORCH_CHECK(a.indptr.scalar_type() == at::kInt && a.indices.scalar_type() == at::kInt,
              "spmm (CUDA): indptr and indices must be int32 (got ", a.indptr.scalar_type(), ", ",
              a.indices.scalar_type(), "); CsrTensor::to(cuda) converts them");
  DeviceCsr d;
  d.num_rows = a.num_rows;
  d.num_cols = a.num_cols;
  d.nnz = a.nnz();
  d.indptr = a.indptr.data_ptr<int32_t>();
  d.indices = a.indices.data_ptr<int32_t>();
  d.values = a.values.data_ptr<float>();
  d.value_type = CUDA_R_32F;
  return d;
}

cudaDataType cuda_type(at::ScalarType t) {
  return t == at::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

// Workspace blocks from torch's caching allocator on `device`: each lives in
// `held` until the cuSPARSE call that asked for it has been queued; freeing it
// then is safe because the allocator reuses a block only for work queued
// later on the same stream.
WorkspaceFn torch_workspace(at::Tensor& held, c10::Device device) {
  return [&held, device](size_t bytes) -> void* {
    if (bytes == 0) return nullptr;
    held = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
    return held.data_ptr();
  };
}

}  // namespace

at::Tensor spmm_cuda(const CsrTensor& a, const at::Tensor& x, bool transpose_a, at::ScalarType out_dtype) {
  TORCH_CHECK(a.device() == x.device(), "spmm (CUDA): a and x must be on one device (got ", a.device(), ", ",
              x.device(), ")");
  c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor xc = x.stride(1) == 1 ? x : x.contiguous();
  const int64_t f = xc.size(1);
  const int64_t rows = transpose_a ? a.num_cols : a.num_rows;
  const bool x_bf16 = xc.scalar_type() == at::kBFloat16;
  // Note [bf16 SpMM on CUDA]: float32 x with a bf16 y is computed in float32 and rounded.
  const at::ScalarType kernel_out = x_bf16 ? out_dtype : at::kFloat;
  at::Tensor y = at::empty({rows, f}, xc.options().dtype(kernel_out));
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
  at::Tensor workspace;
  DeviceCsr csr = device_csr(a);
  at::Tensor bf16_values;  // lives until the call is queued (the allocator orders its reuse)
  if (x_bf16) {
    bf16_values = a.values.to(at::kBFloat16);
    csr.values = bf16_values.data_ptr<c10::BFloat16>();
    csr.value_type = CUDA_R_16BF;
  }
  CusparseSpmm& context = context_for(x.device().index());
  context.spmm(stream, csr, transpose_a,
               DeviceDense{xc.data_ptr(), xc.stride(0), cuda_type(xc.scalar_type())}, f,
               DeviceDense{y.data_ptr(), f, cuda_type(kernel_out)}, torch_workspace(workspace, x.device()));
  if (!context.deterministic(cuda_type(xc.scalar_type()))) {
    TORCH_WARN_ONCE(
        "spmm (CUDA): cuSPARSE refused CUSPARSE_SPMM_CSR_ALG3 for these shapes and ran its default "
        "algorithm, which is not documented as bit-reproducible: results may differ run to run");
  }
  return kernel_out == out_dtype ? y : y.to(out_dtype);
}

CsrTensor transpose_cuda(const CsrTensor& a) {
  c10::cuda::CUDAGuard guard(a.device());
  CsrTensor t = a.empty_transpose();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(a.device().index()).stream();
  at::Tensor workspace;
  context_for(a.device().index())
      .transpose(stream, device_csr(a), t.indptr.data_ptr<int32_t>(), t.indices.data_ptr<int32_t>(),
                 t.values.data_ptr<float>(), torch_workspace(workspace, a.device()));
  return t;
}

}  // namespace dgcn::cuda
