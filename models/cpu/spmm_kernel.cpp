#include "models/cpu/spmm_kernel.h"

#include "base/simd_clones.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace dgcn::cpu {
namespace {

// Note [SpMM row kernel]
// Each output row is accumulated in place (it stays in L1: 128 floats are
// 512 bytes) while the rows of x it reads come from anywhere in memory. The
// x rows are the traffic: one random row (a few cache lines) per entry. The
// hardware prefetcher follows a row once it is being read but cannot guess
// the next row, so the kernel prefetches the x row of the entry kPrefetchAhead
// entries ahead, which keeps several row misses in flight per core. The
// feature loop has unit stride and no dependences, so the compiler
// vectorizes it for whatever target the clone is built for.
constexpr int64_t kPrefetchAhead = 16;

template <class Index, class In>
__attribute__((always_inline)) inline void prefetch_row(const CsrRef<Index>& a, const In* x, int64_t ldx,
                                                        int64_t row_bytes, int64_t e, int64_t end) {
  if (e >= end) return;
  const char* p = reinterpret_cast<const char*>(x + static_cast<int64_t>(a.indices[e]) * ldx);
  for (int64_t c = 0; c < row_bytes; c += 64) __builtin_prefetch(p + c, 0, 3);
}

// Features per block of a bf16 output row: its float32 sums stay on the
// stack (1 KiB) and are rounded once the row's last entry is added.
constexpr int64_t kPortableBlock = 256;

template <class Index, class In, class Out>
__attribute__((always_inline)) inline void rows_body(const CsrRef<Index>& a, const In* __restrict x,
                                                     int64_t ldx, Out* __restrict y, int64_t ldy, int64_t f,
                                                     int64_t row_begin, int64_t row_end) {
  const int64_t* indptr = a.indptr;
  const Index* indices = a.indices;
  const float* values = a.values;
  const int64_t row_bytes = f * static_cast<int64_t>(sizeof(In));
  const int64_t end = indptr[row_end];
  for (int64_t e = indptr[row_begin]; e < std::min(end, indptr[row_begin] + kPrefetchAhead); ++e) {
    prefetch_row(a, x, ldx, row_bytes, e, end);
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    Out* __restrict yr = y + r * ldy;
    const int64_t e0 = indptr[r];
    const int64_t e1 = indptr[r + 1];
    if (e0 == e1) {
      std::memset(yr, 0, static_cast<size_t>(f) * sizeof(Out));  // +0.0 in both types
      continue;
    }
    if constexpr (std::is_same_v<Out, float>) {
      // Summed in place in y.
      {
        prefetch_row(a, x, ldx, row_bytes, e0 + kPrefetchAhead, end);
        const float w = values ? values[e0] : 1.0f;
        const In* __restrict xr = x + static_cast<int64_t>(indices[e0]) * ldx;
        for (int64_t j = 0; j < f; ++j) yr[j] = w * to_float(xr[j]);
      }
      for (int64_t e = e0 + 1; e < e1; ++e) {
        prefetch_row(a, x, ldx, row_bytes, e + kPrefetchAhead, end);
        const float w = values ? values[e] : 1.0f;
        const In* __restrict xr = x + static_cast<int64_t>(indices[e]) * ldx;
        for (int64_t j = 0; j < f; ++j) yr[j] += w * to_float(xr[j]);
      }
    } else {
      // The same sums, term for term, in a float32 block, then rounded.
      float acc[kPortableBlock];
      for (int64_t f0 = 0; f0 < f; f0 += kPortableBlock) {
        const int64_t width = std::min(kPortableBlock, f - f0);
        for (int64_t e = e0; e < e1; ++e) {
          if (f0 == 0) prefetch_row(a, x, ldx, row_bytes, e + kPrefetchAhead, end);
          const float w = values ? values[e] : 1.0f;
          const In* __restrict xr = x + static_cast<int64_t>(indices[e]) * ldx + f0;
          if (e == e0) {
            for (int64_t j = 0; j < width; ++j) acc[j] = w * to_float(xr[j]);
          } else {
            for (int64_t j = 0; j < width; ++j) acc[j] += w * to_float(xr[j]);
          }
        }
        for (int64_t j = 0; j < width; ++j) yr[f0 + j] = to_bf16(acc[j]);
      }
    }
  }
}

template <class Index, class In>
__attribute__((always_inline)) inline void scatter_body(const CsrRef<Index>& a, const In* __restrict x,
                                                        int64_t ldx, float* __restrict y, int64_t ldy,
                                                        int64_t f) {
  for (int64_t r = 0; r < a.num_rows; ++r) {
    const In* __restrict xr = x + r * ldx;
    for (int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
      const float w = a.values ? a.values[e] : 1.0f;
      float* __restrict yr = y + static_cast<int64_t>(a.indices[e]) * ldy;
      for (int64_t j = 0; j < f; ++j) yr[j] += w * to_float(xr[j]);
    }
  }
}

// Note [AVX-512 row kernel]
// The generic loop keeps the output row in memory and, with a run-time
// width, gets a scalar remainder; measured here it costs ~14 ns per entry
// even with x in cache. The AVX-512 kernel keeps the whole output row in
// registers (up to 8 x 16 floats: widths <= 128 in one pass, wider rows in
// blocks of 128 features), handles the last partial vector with a masked
// load/store, and prefetches inside the entry loop: ~7 ns per entry in
// cache, and 1.3-2x the generic loop on products-like blocks.
#define DGCN_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define DGCN_AVX512_INLINE DGCN_AVX512 __attribute__((always_inline)) inline
constexpr int64_t kMaxVectors = 8;  // 128 features

// The zero-masking forms of the conversions and shifts, under an all-ones
// mask, are the plain instructions; gcc 12 warns (falsely) that the plain
// intrinsics read an uninitialized vector.
constexpr __mmask16 kAll = 0xFFFF;

// 16 features as float32 lanes (masked: lanes off the mask read as 0, and
// read no memory). bf16: zero-extend to 32 bits and shift into the upper half.
DGCN_AVX512_INLINE __m512 load16(const float* p) {
  return _mm512_loadu_ps(p);
}
DGCN_AVX512_INLINE __m512 load16(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}
DGCN_AVX512_INLINE __m512 widen16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
}
DGCN_AVX512_INLINE __m512 load16(const Bf16* p) {
  return widen16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
DGCN_AVX512_INLINE __m512 load16(const Bf16* p, __mmask16 m) {
  return widen16(_mm256_maskz_loadu_epi16(m, p));
}

DGCN_AVX512_INLINE void store16(float* p, __m512 v) {
  _mm512_storeu_ps(p, v);
}
DGCN_AVX512_INLINE void store16(float* p, __mmask16 m, __m512 v) {
  _mm512_mask_storeu_ps(p, m, v);
}
// to_bf16 on 16 lanes (Note [bf16 SpMM]: integer round to nearest even).
DGCN_AVX512_INLINE __m256i narrow16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_maskz_srli_epi32(kAll, u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_maskz_srli_epi32(
      kAll, _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
  return _mm512_maskz_cvtepi32_epi16(kAll, r);
}
DGCN_AVX512_INLINE void store16(Bf16* p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow16(v));
}
DGCN_AVX512_INLINE void store16(Bf16* p, __mmask16 m, __m512 v) {
  _mm256_mask_storeu_epi16(p, m, narrow16(v));
}

template <int NV, class Index, class In, class Out>
DGCN_AVX512_INLINE void row_avx512(const CsrRef<Index>& a, const In* __restrict x, int64_t ldx,
                                   Out* __restrict yr, int64_t e0, int64_t e1, __mmask16 tail, int64_t end,
                                   int64_t prefetch_bytes) {
  __m512 acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
  for (int64_t e = e0; e < e1; ++e) {
    if (e + kPrefetchAhead < end) {
      const char* p =
          reinterpret_cast<const char*>(x + static_cast<int64_t>(a.indices[e + kPrefetchAhead]) * ldx);
      for (int64_t c = 0; c < prefetch_bytes; c += 64) _mm_prefetch(p + c, _MM_HINT_T0);
    }
    const __m512 w = _mm512_set1_ps(a.values ? a.values[e] : 1.0f);
    const In* xr = x + static_cast<int64_t>(a.indices[e]) * ldx;
    for (int v = 0; v < NV - 1; ++v) acc[v] = _mm512_fmadd_ps(w, load16(xr + 16 * v), acc[v]);
    acc[NV - 1] = _mm512_fmadd_ps(w, load16(xr + 16 * (NV - 1), tail), acc[NV - 1]);
  }
  for (int v = 0; v < NV - 1; ++v) store16(yr + 16 * v, acc[v]);
  store16(yr + 16 * (NV - 1), tail, acc[NV - 1]);
}

// Rows [rb, re), features [f0, f0 + width) with width in (16 (NV-1), 16 NV].
template <int NV, class Index, class In, class Out>
DGCN_AVX512 void rows_avx512(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy,
                             int64_t width, int64_t rb, int64_t re) {
  const int64_t rem = width - 16 * (NV - 1);
  const auto tail = static_cast<__mmask16>(rem == 16 ? 0xFFFF : (1u << rem) - 1);
  const int64_t end = a.indptr[re];
  const int64_t prefetch_bytes = width * static_cast<int64_t>(sizeof(In));
  for (int64_t r = rb; r < re; ++r) {
    row_avx512<NV>(a, x, ldx, y + r * ldy, a.indptr[r], a.indptr[r + 1], tail, end, prefetch_bytes);
  }
}

template <class Index, class In, class Out>
void spmm_rows_avx512(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, int64_t f,
                      int64_t rb, int64_t re) {
  for (int64_t f0 = 0; f0 < f; f0 += 16 * kMaxVectors) {
    const int64_t width = std::min<int64_t>(16 * kMaxVectors, f - f0);
    const In* xs = x + f0;
    Out* ys = y + f0;
    switch ((width + 15) / 16) {
      case 1:
        rows_avx512<1>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 2:
        rows_avx512<2>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 3:
        rows_avx512<3>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 4:
        rows_avx512<4>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 5:
        rows_avx512<5>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 6:
        rows_avx512<6>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      case 7:
        rows_avx512<7>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
      default:
        rows_avx512<8>(a, xs, ldx, ys, ldy, width, rb, re);
        break;
    }
  }
}

bool have_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  }();
  return yes;
}

// One clone set per (index, x, y) type: target_clones needs plain functions.
#define DGCN_ROWS_CLONE(Index, In, Out)                                                                      \
  DGCN_SIMD_CLONES void rows_portable(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, \
                                      int64_t f, int64_t rb, int64_t re) {                                   \
    rows_body(a, x, ldx, y, ldy, f, rb, re);                                                                 \
  }
DGCN_ROWS_CLONE(int32_t, float, float)
DGCN_ROWS_CLONE(int64_t, float, float)
DGCN_ROWS_CLONE(int32_t, Bf16, float)
DGCN_ROWS_CLONE(int64_t, Bf16, float)
DGCN_ROWS_CLONE(int32_t, float, Bf16)
DGCN_ROWS_CLONE(int64_t, float, Bf16)
DGCN_ROWS_CLONE(int32_t, Bf16, Bf16)
DGCN_ROWS_CLONE(int64_t, Bf16, Bf16)
#undef DGCN_ROWS_CLONE

#define DGCN_SCATTER_CLONE(Index, In)                                                                \
  DGCN_SIMD_CLONES void scatter_portable(const CsrRef<Index>& a, const In* x, int64_t ldx, float* y, \
                                         int64_t ldy, int64_t f) {                                   \
    scatter_body(a, x, ldx, y, ldy, f);                                                              \
  }
DGCN_SCATTER_CLONE(int32_t, float)
DGCN_SCATTER_CLONE(int64_t, float)
DGCN_SCATTER_CLONE(int32_t, Bf16)
DGCN_SCATTER_CLONE(int64_t, Bf16)
#undef DGCN_SCATTER_CLONE

}  // namespace

template <class Index, class In, class Out>
void spmm_rows(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, int64_t f,
               int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end || f <= 0) return;
  if (have_avx512()) return spmm_rows_avx512(a, x, ldx, y, ldy, f, row_begin, row_end);
  rows_portable(a, x, ldx, y, ldy, f, row_begin, row_end);
}

template <class Index, class In, class Out>
void spmm_rows_portable(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, int64_t f,
                        int64_t row_begin, int64_t row_end) {
  if (row_begin < row_end && f > 0) rows_portable(a, x, ldx, y, ldy, f, row_begin, row_end);
}

template <class Index, class In>
void spmm_transpose_scatter(const CsrRef<Index>& a, const In* x, int64_t ldx, float* y, int64_t ldy,
                            int64_t f) {
  if (f > 0) scatter_portable(a, x, ldx, y, ldy, f);
}

#define DGCN_INSTANTIATE_ROWS(Index, In, Out)                                                               \
  template void spmm_rows<Index, In, Out>(const CsrRef<Index>&, const In*, int64_t, Out*, int64_t, int64_t, \
                                          int64_t, int64_t);                                                \
  template void spmm_rows_portable<Index, In, Out>(const CsrRef<Index>&, const In*, int64_t, Out*, int64_t, \
                                                   int64_t, int64_t, int64_t);
DGCN_INSTANTIATE_ROWS(int32_t, float, float)
DGCN_INSTANTIATE_ROWS(int64_t, float, float)
DGCN_INSTANTIATE_ROWS(int32_t, Bf16, float)
DGCN_INSTANTIATE_ROWS(int64_t, Bf16, float)
DGCN_INSTANTIATE_ROWS(int32_t, float, Bf16)
DGCN_INSTANTIATE_ROWS(int64_t, float, Bf16)
DGCN_INSTANTIATE_ROWS(int32_t, Bf16, Bf16)
DGCN_INSTANTIATE_ROWS(int64_t, Bf16, Bf16)
#undef DGCN_INSTANTIATE_ROWS
template void spmm_transpose_scatter<int32_t, float>(const CsrRef<int32_t>&, const float*, int64_t, float*,
                                                     int64_t, int64_t);
template void spmm_transpose_scatter<int64_t, float>(const CsrRef<int64_t>&, const float*, int64_t, float*,
                                                     int64_t, int64_t);
template void spmm_transpose_scatter<int32_t, Bf16>(const CsrRef<int32_t>&, const Bf16*, int64_t, float*,
                                                    int64_t, int64_t);
template void spmm_transpose_scatter<int64_t, Bf16>(const CsrRef<int64_t>&, const Bf16*, int64_t, float*,
                                                    int64_t, int64_t);

std::vector<int64_t> balanced_row_splits(const int64_t* indptr, int64_t num_rows, int64_t parts) {
  parts = std::max<int64_t>(1, parts);
  std::vector<int64_t> splits(static_cast<size_t>(parts + 1), num_rows);
  splits[0] = 0;
  // Work of the first r rows: indptr[r] - indptr[0] + r (monotone in r).
  const int64_t base = num_rows == 0 ? 0 : indptr[0];
  const int64_t total = (num_rows == 0 ? 0 : indptr[num_rows] - base) + num_rows;
  int64_t r = 0;
  for (int64_t p = 1; p < parts; ++p) {
    const int64_t target = total * p / parts;
    // First row r whose prefix work reaches the target (binary search).
    int64_t lo = r, hi = num_rows;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (indptr[mid] - base + mid < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    r = lo;
    splits[static_cast<size_t>(p)] = r;
  }
  return splits;
}

template <class Index>
void transpose(const CsrRef<Index>& a, int64_t* out_indptr, Index* out_indices, float* out_values) {
  const int64_t base = a.num_rows == 0 ? 0 : a.indptr[0];
  std::fill(out_indptr, out_indptr + a.num_cols + 1, int64_t{0});
  for (int64_t e = base; e < base + a.nnz(); ++e) ++out_indptr[static_cast<int64_t>(a.indices[e]) + 1];
  for (int64_t c = 0; c < a.num_cols; ++c) out_indptr[c + 1] += out_indptr[c];
  // Fill with a moving cursor per output row; rows are visited in order, so
  // each output row lists its entries by increasing input row.
  std::vector<int64_t> cursor(out_indptr, out_indptr + a.num_cols);
  for (int64_t r = 0; r < a.num_rows; ++r) {
    for (int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
      const int64_t pos = cursor[static_cast<size_t>(a.indices[e])]++;
      out_indices[pos] = static_cast<Index>(r);
      if (out_values && a.values) out_values[pos] = a.values[e];
    }
  }
}

template void transpose<int32_t>(const CsrRef<int32_t>&, int64_t*, int32_t*, float*);
template void transpose<int64_t>(const CsrRef<int64_t>&, int64_t*, int64_t*, float*);

const char* simd_level() {
  if (have_avx512()) return "avx512";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v3")) return "avx2";
  return "baseline";
}

}  // namespace dgcn::cpu
