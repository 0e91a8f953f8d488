#include "models/cpu/gat_kernel.h"

#include "base/simd_clones.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dgcn::cpu {
namespace {

inline float leaky(float s, float slope) {
  return s > 0.0F ? s : s * slope;
}

}  // namespace

// Note [GAT kernel prefetch]
// Each entry reads one random row (x or dout, 4 x 32 floats = 8 cache
// lines); the hardware prefetcher cannot guess the next row, so the row of
// the entry kPrefetchAhead entries ahead is requested early, keeping several
// misses in flight per core, as the SpMM kernel does (cpu/spmm_kernel.cpp).
constexpr int64_t kPrefetchAhead = 8;

__attribute__((always_inline)) inline void prefetch_row(const float* row, int64_t width) {
  const char* p = reinterpret_cast<const char*>(row);
  for (int64_t b = 0; b < width * static_cast<int64_t>(sizeof(float)); b += 64)
    __builtin_prefetch(p + b, 0, 3);
}

// <g, x> over n features in 8 interleaved partial sums combined in a fixed
// tree: the compiler may not reorder a single running sum, so one sum runs
// at the latency of an add per feature; explicit lanes vectorize, and the
// order is still the same on every thread and every run.
__attribute__((always_inline)) inline float dot_lanes(const float* g, const float* x, int64_t n) {
  constexpr int kLanes = 8;
  float acc[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += g[c + l] * x[c + l];
  }
  float dot = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; c < n; ++c) dot += g[c] * x[c];
  return dot;
}

template <class Index>
void transpose_edges(const CsrRef<Index>& a, int64_t* t_indptr, Index* t_rows, int64_t* t_edge) {
  // Counting sort by column, stable in (row, entry) order.
  std::fill(t_indptr, t_indptr + a.num_cols + 1, int64_t{0});
  const int64_t base = a.indptr[0];
  const int64_t nnz = a.nnz();
  for (int64_t k = 0; k < nnz; ++k) ++t_indptr[static_cast<int64_t>(a.indices[base + k]) + 1];
  for (int64_t j = 0; j < a.num_cols; ++j) t_indptr[j + 1] += t_indptr[j];
  std::vector<int64_t> next(t_indptr, t_indptr + a.num_cols);
  for (int64_t i = 0; i < a.num_rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t pos = next[static_cast<size_t>(a.indices[k])]++;
      t_rows[pos] = static_cast<Index>(i);
      t_edge[pos] = k - base;
    }
  }
}

template <class Index>
void gat_scores_rows(const CsrRef<Index>& a, const float* a_src, const float* a_dst, int64_t heads,
                     float negative_slope, float* e, int64_t row_begin, int64_t row_end) {
  const int64_t base = a.indptr[0];
  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* ad = a_dst + i * heads;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const float* as = a_src + static_cast<int64_t>(a.indices[k]) * heads;
      float* ek = e + (k - base) * heads;
      for (int64_t h = 0; h < heads; ++h) ek[h] = leaky(ad[h] + as[h], negative_slope);
    }
  }
}

template <class Index>
void gat_scores_backward_rows(const CsrRef<Index>& a, const float* a_src, const float* a_dst, const float* de,
                              int64_t heads, float negative_slope, float* ds, float* da_dst,
                              int64_t row_begin, int64_t row_end) {
  const int64_t base = a.indptr[0];
  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* ad = a_dst + i * heads;
    float* gd = da_dst + i * heads;
    std::fill(gd, gd + heads, 0.0F);
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const float* as = a_src + static_cast<int64_t>(a.indices[k]) * heads;
      const int64_t off = (k - base) * heads;
      for (int64_t h = 0; h < heads; ++h) {
        const float g = ad[h] + as[h] > 0.0F ? de[off + h] : de[off + h] * negative_slope;
        ds[off + h] = g;
        gd[h] += g;
      }
    }
  }
}

template <class Index>
void column_sums(const EdgeTranspose<Index>& t, const float* v, int64_t heads, float* out, int64_t col_begin,
                 int64_t col_end) {
  for (int64_t j = col_begin; j < col_end; ++j) {
    float* o = out + j * heads;
    std::fill(o, o + heads, 0.0F);
    for (int64_t p = t.indptr[j]; p < t.indptr[j + 1]; ++p) {
      const float* vk = v + t.edge[p] * heads;
      for (int64_t h = 0; h < heads; ++h) o[h] += vk[h];
    }
  }
}

void edge_softmax_rows(const int64_t* indptr, const float* e, int64_t heads, float* alpha, int64_t row_begin,
                       int64_t row_end) {
  const int64_t base = indptr[0];
  for (int64_t i = row_begin; i < row_end; ++i) {
    const int64_t k0 = indptr[i] - base;
    const int64_t k1 = indptr[i + 1] - base;
    for (int64_t h = 0; h < heads; ++h) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t k = k0; k < k1; ++k) m = std::max(m, e[k * heads + h]);
      float sum = 0.0F;
      for (int64_t k = k0; k < k1; ++k) {
        const float z = std::exp(e[k * heads + h] - m);
        alpha[k * heads + h] = z;
        sum += z;
      }
      const float inv = 1.0F / sum;
      for (int64_t k = k0; k < k1; ++k) alpha[k * heads + h] *= inv;
    }
  }
}

void edge_softmax_backward_rows(const int64_t* indptr, const float* alpha, const float* dalpha, int64_t heads,
                                float* de, int64_t row_begin, int64_t row_end) {
  const int64_t base = indptr[0];
  for (int64_t i = row_begin; i < row_end; ++i) {
    const int64_t k0 = indptr[i] - base;
    const int64_t k1 = indptr[i + 1] - base;
    for (int64_t h = 0; h < heads; ++h) {
      float dot = 0.0F;
      for (int64_t k = k0; k < k1; ++k) dot += alpha[k * heads + h] * dalpha[k * heads + h];
      for (int64_t k = k0; k < k1; ++k)
        de[k * heads + h] = alpha[k * heads + h] * (dalpha[k * heads + h] - dot);
    }
  }
}

template <class Index>
__attribute__((always_inline)) inline void gat_spmm_rows_body(const CsrRef<Index>& a, const float* alpha,
                                                              const float* x, int64_t heads, int64_t channels,
                                                              float* out, int64_t row_begin,
                                                              int64_t row_end) {
  const int64_t width = heads * channels;
  const int64_t base = a.indptr[0];
  const int64_t end = a.indptr[row_end];  // prefetch bound
  for (int64_t i = row_begin; i < row_end; ++i) {
    float* o = out + i * width;
    std::fill(o, o + width, 0.0F);
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      if (k + kPrefetchAhead < end)
        prefetch_row(x + static_cast<int64_t>(a.indices[k + kPrefetchAhead]) * width, width);
      const float* xj = x + static_cast<int64_t>(a.indices[k]) * width;
      const float* ak = alpha + (k - base) * heads;
      for (int64_t h = 0; h < heads; ++h) {
        const float w = ak[h];
        float* oh = o + h * channels;
        const float* xh = xj + h * channels;
        for (int64_t c = 0; c < channels; ++c) oh[c] += w * xh[c];
      }
    }
  }
}

template <class Index>
__attribute__((always_inline)) inline void gat_spmm_alpha_grad_rows_body(const CsrRef<Index>& a,
                                                                         const float* dout, const float* x,
                                                                         int64_t heads, int64_t channels,
                                                                         float* dalpha, int64_t row_begin,
                                                                         int64_t row_end) {
  const int64_t width = heads * channels;
  const int64_t base = a.indptr[0];
  const int64_t end = a.indptr[row_end];  // prefetch bound
  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* g = dout + i * width;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      if (k + kPrefetchAhead < end)
        prefetch_row(x + static_cast<int64_t>(a.indices[k + kPrefetchAhead]) * width, width);
      const float* xj = x + static_cast<int64_t>(a.indices[k]) * width;
      float* dk = dalpha + (k - base) * heads;
      for (int64_t h = 0; h < heads; ++h) {
        const float* gh = g + h * channels;
        const float* xh = xj + h * channels;
        dk[h] = dot_lanes(gh, xh, channels);
      }
    }
  }
}

template <class Index>
__attribute__((always_inline)) inline void gat_spmm_x_grad_cols_body(const EdgeTranspose<Index>& t,
                                                                     const float* alpha, const float* dout,
                                                                     int64_t heads, int64_t channels,
                                                                     float* dx, int64_t col_begin,
                                                                     int64_t col_end) {
  const int64_t width = heads * channels;
  const int64_t end = t.indptr[col_end];  // prefetch bound
  for (int64_t j = col_begin; j < col_end; ++j) {
    float* o = dx + j * width;
    std::fill(o, o + width, 0.0F);
    for (int64_t p = t.indptr[j]; p < t.indptr[j + 1]; ++p) {
      if (p + kPrefetchAhead < end)
        prefetch_row(dout + static_cast<int64_t>(t.rows[p + kPrefetchAhead]) * width, width);
      const float* gi = dout + static_cast<int64_t>(t.rows[p]) * width;
      const float* ak = alpha + t.edge[p] * heads;
      for (int64_t h = 0; h < heads; ++h) {
        const float w = ak[h];
        float* oh = o + h * channels;
        const float* gh = gi + h * channels;
        for (int64_t c = 0; c < channels; ++c) oh[c] += w * gh[c];
      }
    }
  }
}

namespace {

// Note [GAT kernel clones]
// The feature loops of the weighted SpMM and its two gradients have unit
// stride and no dependences; built once per instruction set (x86-64-v4's
// AVX-512, v3's AVX2, baseline) and picked at load time, as the SpMM kernel's
// are (base/simd_clones.h). target_clones needs plain functions, hence one
// overload per id type.
#define DGCN_GAT_CLONES(Index)                                                                             \
  DGCN_SIMD_CLONES void spmm_clone(const CsrRef<Index>& a, const float* alpha, const float* x,             \
                                   int64_t heads, int64_t channels, float* out, int64_t rb, int64_t re) {  \
    gat_spmm_rows_body(a, alpha, x, heads, channels, out, rb, re);                                         \
  }                                                                                                        \
  DGCN_SIMD_CLONES void alpha_grad_clone(const CsrRef<Index>& a, const float* dout, const float* x,        \
                                         int64_t heads, int64_t channels, float* dalpha, int64_t rb,       \
                                         int64_t re) {                                                     \
    gat_spmm_alpha_grad_rows_body(a, dout, x, heads, channels, dalpha, rb, re);                            \
  }                                                                                                        \
  DGCN_SIMD_CLONES void x_grad_clone(const EdgeTranspose<Index>& t, const float* alpha, const float* dout, \
                                     int64_t heads, int64_t channels, float* dx, int64_t cb, int64_t ce) { \
    gat_spmm_x_grad_cols_body(t, alpha, dout, heads, channels, dx, cb, ce);                                \
  }
DGCN_GAT_CLONES(int32_t)
DGCN_GAT_CLONES(int64_t)
#undef DGCN_GAT_CLONES

}  // namespace

template <class Index>
void gat_spmm_rows(const CsrRef<Index>& a, const float* alpha, const float* x, int64_t heads,
                   int64_t channels, float* out, int64_t row_begin, int64_t row_end) {
  spmm_clone(a, alpha, x, heads, channels, out, row_begin, row_end);
}

template <class Index>
void gat_spmm_alpha_grad_rows(const CsrRef<Index>& a, const float* dout, const float* x, int64_t heads,
                              int64_t channels, float* dalpha, int64_t row_begin, int64_t row_end) {
  alpha_grad_clone(a, dout, x, heads, channels, dalpha, row_begin, row_end);
}

template <class Index>
void gat_spmm_x_grad_cols(const EdgeTranspose<Index>& t, const float* alpha, const float* dout, int64_t heads,
                          int64_t channels, float* dx, int64_t col_begin, int64_t col_end) {
  x_grad_clone(t, alpha, dout, heads, channels, dx, col_begin, col_end);
}

#define DGCN_GAT_KERNEL_INSTANTIATE(Index)                                                                   \
  template void transpose_edges(const CsrRef<Index>&, int64_t*, Index*, int64_t*);                           \
  template void gat_scores_rows(const CsrRef<Index>&, const float*, const float*, int64_t, float, float*,    \
                                int64_t, int64_t);                                                           \
  template void gat_scores_backward_rows(const CsrRef<Index>&, const float*, const float*, const float*,     \
                                         int64_t, float, float*, float*, int64_t, int64_t);                  \
  template void column_sums(const EdgeTranspose<Index>&, const float*, int64_t, float*, int64_t, int64_t);   \
  template void gat_spmm_rows(const CsrRef<Index>&, const float*, const float*, int64_t, int64_t, float*,    \
                              int64_t, int64_t);                                                             \
  template void gat_spmm_alpha_grad_rows(const CsrRef<Index>&, const float*, const float*, int64_t, int64_t, \
                                         float*, int64_t, int64_t);                                          \
  template void gat_spmm_x_grad_cols(const EdgeTranspose<Index>&, const float*, const float*, int64_t,       \
                                     int64_t, float*, int64_t, int64_t);
DGCN_GAT_KERNEL_INSTANTIATE(int32_t)
DGCN_GAT_KERNEL_INSTANTIATE(int64_t)
#undef DGCN_GAT_KERNEL_INSTANTIATE

}  // namespace dgcn::cpu
