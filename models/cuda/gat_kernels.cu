// Note [GAT kernels on CUDA] (gat_kernels.cuh).
#include "models/cuda/cusparse_spmm.h"
#include "models/cuda/gat_kernels.cuh"

namespace dgcn::cuda {
namespace {

constexpr int kThreads = 256;

// Blocks for n threads, capped: the kernels loop grid-stride.
unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

__device__ inline float leaky(float s, float slope) {
  return s > 0.0F ? s : s * slope;
}

__global__ void scores_kernel(GatCsr a, const float* a_src, const float* a_dst, int64_t heads, float slope,
                              float* e) {
  const int64_t n = a.num_rows * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / heads;
    const int64_t h = t % heads;
    const float ad = a_dst[t];
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
      e[k * heads + h] = leaky(ad + a_src[int64_t{a.indices[k]} * heads + h], slope);
  }
}

__global__ void scores_backward_kernel(GatCsr a, const float* a_src, const float* a_dst, const float* de,
                                       int64_t heads, float slope, float* ds, float* da_dst) {
  const int64_t n = a.num_rows * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / heads;
    const int64_t h = t % heads;
    const float ad = a_dst[t];
    float sum = 0.0F;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t o = k * heads + h;
      const float g = ad + a_src[int64_t{a.indices[k]} * heads + h] > 0.0F ? de[o] : de[o] * slope;
      ds[o] = g;
      sum += g;
    }
    da_dst[t] = sum;
  }
}

__global__ void column_sums_kernel(GatTranspose tr, const float* v, int64_t heads, float* out) {
  const int64_t n = tr.num_cols * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = t / heads;
    const int64_t h = t % heads;
    float sum = 0.0F;
    for (int64_t p = tr.indptr[j]; p < tr.indptr[j + 1]; ++p) sum += v[int64_t{tr.edge[p]} * heads + h];
    out[t] = sum;
  }
}

__global__ void softmax_kernel(GatCsr a, const float* e, int64_t heads, float* alpha) {
  const int64_t n = a.num_rows * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / heads;
    const int64_t h = t % heads;
    const int64_t k0 = a.indptr[i];
    const int64_t k1 = a.indptr[i + 1];
    float m = -INFINITY;
    for (int64_t k = k0; k < k1; ++k) m = fmaxf(m, e[k * heads + h]);
    float sum = 0.0F;
    for (int64_t k = k0; k < k1; ++k) {
      const float z = expf(e[k * heads + h] - m);
      alpha[k * heads + h] = z;
      sum += z;
    }
    const float inv = 1.0F / sum;
    for (int64_t k = k0; k < k1; ++k) alpha[k * heads + h] *= inv;
  }
}

__global__ void softmax_backward_kernel(GatCsr a, const float* alpha, const float* dalpha, int64_t heads,
                                        float* de) {
  const int64_t n = a.num_rows * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / heads;
    const int64_t h = t % heads;
    float dot = 0.0F;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
      dot += alpha[k * heads + h] * dalpha[k * heads + h];
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
      de[k * heads + h] = alpha[k * heads + h] * (dalpha[k * heads + h] - dot);
  }
}

// One thread per (row, head, feature): neighbouring threads read neighbouring
// features of one x row, so the loads coalesce.
__global__ void spmm_kernel(GatCsr a, const float* alpha, const float* x, int64_t heads, int64_t channels,
                            float* out) {
  const int64_t width = heads * channels;
  const int64_t n = a.num_rows * width;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / width;
    const int64_t f = t % width;
    const int64_t h = f / channels;
    float sum = 0.0F;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
      sum += alpha[k * heads + h] * x[int64_t{a.indices[k]} * width + f];
    out[t] = sum;
  }
}

__global__ void alpha_grad_kernel(GatCsr a, const float* dout, const float* x, int64_t heads,
                                  int64_t channels, float* dalpha) {
  const int64_t width = heads * channels;
  const int64_t n = a.num_rows * heads;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / heads;
    const int64_t h = t % heads;
    const float* g = dout + i * width + h * channels;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const float* xj = x + int64_t{a.indices[k]} * width + h * channels;
      float dot = 0.0F;
      for (int64_t c = 0; c < channels; ++c) dot += g[c] * xj[c];
      dalpha[k * heads + h] = dot;
    }
  }
}

__global__ void x_grad_kernel(GatTranspose tr, const float* alpha, const float* dout, int64_t heads,
                              int64_t channels, float* dx) {
  const int64_t width = heads * channels;
  const int64_t n = tr.num_cols * width;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = t / width;
    const int64_t f = t % width;
    const int64_t h = f / channels;
    float sum = 0.0F;
    for (int64_t p = tr.indptr[j]; p < tr.indptr[j + 1]; ++p)
      sum += alpha[int64_t{tr.edge[p]} * heads + h] * dout[int64_t{tr.rows[p]} * width + f];
    dx[t] = sum;
  }
}

}  // namespace

void gat_scores(const GatCsr& a, const float* a_src, const float* a_dst, int64_t heads, float slope, float* e,
                cudaStream_t stream) {
  if (a.num_rows * heads == 0) return;
  scores_kernel<<<blocks_for(a.num_rows * heads), kThreads, 0, stream>>>(a, a_src, a_dst, heads, slope, e);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void gat_scores_backward(const GatCsr& a, const float* a_src, const float* a_dst, const float* de,
                         int64_t heads, float slope, float* ds, float* da_dst, cudaStream_t stream) {
  if (a.num_rows * heads == 0) return;
  scores_backward_kernel<<<blocks_for(a.num_rows * heads), kThreads, 0, stream>>>(a, a_src, a_dst, de, heads,
                                                                                  slope, ds, da_dst);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void column_sums(const GatTranspose& t, const float* v, int64_t heads, float* out, cudaStream_t stream) {
  if (t.num_cols * heads == 0) return;
  column_sums_kernel<<<blocks_for(t.num_cols * heads), kThreads, 0, stream>>>(t, v, heads, out);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void edge_softmax(const GatCsr& a, const float* e, int64_t heads, float* alpha, cudaStream_t stream) {
  if (a.num_rows * heads == 0) return;
  softmax_kernel<<<blocks_for(a.num_rows * heads), kThreads, 0, stream>>>(a, e, heads, alpha);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void edge_softmax_backward(const GatCsr& a, const float* alpha, const float* dalpha, int64_t heads, float* de,
                           cudaStream_t stream) {
  if (a.num_rows * heads == 0) return;
  softmax_backward_kernel<<<blocks_for(a.num_rows * heads), kThreads, 0, stream>>>(a, alpha, dalpha, heads,
                                                                                   de);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void gat_spmm(const GatCsr& a, const float* alpha, const float* x, int64_t heads, int64_t channels,
              float* out, cudaStream_t stream) {
  const int64_t n = a.num_rows * heads * channels;
  if (n == 0) return;
  spmm_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, alpha, x, heads, channels, out);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void gat_spmm_alpha_grad(const GatCsr& a, const float* dout, const float* x, int64_t heads, int64_t channels,
                         float* dalpha, cudaStream_t stream) {
  if (a.num_rows * heads == 0) return;
  alpha_grad_kernel<<<blocks_for(a.num_rows * heads), kThreads, 0, stream>>>(a, dout, x, heads, channels,
                                                                             dalpha);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

void gat_spmm_x_grad(const GatTranspose& t, const float* alpha, const float* dout, int64_t heads,
                     int64_t channels, float* dx, cudaStream_t stream) {
  const int64_t n = t.num_cols * heads * channels;
  if (n == 0) return;
  x_grad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(t, alpha, dout, heads, channels, dx);
  DGCN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dgcn::cuda
