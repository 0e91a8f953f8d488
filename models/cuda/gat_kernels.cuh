// The CUDA side of the GAT kernels (models/gat_kernels.h) in plain CUDA, no
// LibTorch headers, so it compiles with nvcc wherever the toolkit is. The
// torch-facing glue (gat_cuda.cpp) hands it device pointers (32-bit ids, as
// CsrTensor::to(cuda) makes them) and the current stream.
//
// Note [GAT kernels on CUDA]
// One thread per output element (a row and head, or a row, head and
// feature) loops over that row's entries in order, so every sum has one
// fixed order and results are bit-identical run to run; gradients to the
// src side run over the transposed pattern (built by the glue with a stable
// sort), never with atomics. cuSPARSE's SDDMM would serve the alpha
// gradient of one head (dot products of dense rows on the pattern), but it
// wants each head's values contiguous ([H x nnz]) where ours interleave
// ([nnz x H], what the scores and softmax read row by row), costing two
// transposes and H calls; the edge scores are a sum, not a dot product, and
// the softmax has no cuSPARSE counterpart. Small kernels do all three.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dgcn::cuda {

// A CSR pattern on the device (values are not read).
struct GatCsr {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  const int32_t* indptr = nullptr;   // [num_rows + 1]
  const int32_t* indices = nullptr;  // [nnz]
};

// The transposed pattern: row j lists the rows i with an entry (i, j), in
// increasing i, and the entry ids of the original (cpu::EdgeTranspose).
struct GatTranspose {
  int64_t num_cols = 0;
  const int32_t* indptr = nullptr;  // [num_cols + 1]
  const int32_t* rows = nullptr;    // [nnz]
  const int32_t* edge = nullptr;    // [nnz]
};

// The layouts and formulas of cpu/gat_kernel.h; each call launches on `stream`
// and checks the launch (dgcn::Error on failure).
void gat_scores(const GatCsr& a, const float* a_src, const float* a_dst, int64_t heads, float slope, float* e,
                cudaStream_t stream);
void gat_scores_backward(const GatCsr& a, const float* a_src, const float* a_dst, const float* de,
                         int64_t heads, float slope, float* ds, float* da_dst, cudaStream_t stream);
void column_sums(const GatTranspose& t, const float* v, int64_t heads, float* out, cudaStream_t stream);
void edge_softmax(const GatCsr& a, const float* e, int64_t heads, float* alpha, cudaStream_t stream);
void edge_softmax_backward(const GatCsr& a, const float* alpha, const float* dalpha, int64_t heads, float* de,
                           cudaStream_t stream);
void gat_spmm(const GatCsr& a, const float* alpha, const float* x, int64_t heads, int64_t channels,
              float* out, cudaStream_t stream);
void gat_spmm_alpha_grad(const GatCsr& a, const float* dout, const float* x, int64_t heads, int64_t channels,
                         float* dalpha, cudaStream_t stream);
void gat_spmm_x_grad(const GatTranspose& t, const float* alpha, const float* dout, int64_t heads,
                     int64_t channels, float* dx, cudaStream_t stream);

}  // namespace dgcn::cuda
