// CPU backend of the SpMM operation (models/spmm.h): plain C++ over raw
// arrays, no LibTorch, so it compiles in seconds and the benchmark and tests
// can drive it directly. The front end splits rows across threads; each call
// here handles one row range and is vectorized over the feature dimension
// (AVX-512 / AVX2 / baseline chosen at load time). x and y are float32 or
// bfloat16 (Note [bf16 SpMM]); the matrix's values are float32 always.
//
// Example: a = [[0, 2, 0],     indptr = [0, 1, 3], indices = [1, 0, 2],
//               [1, 0, 3]]     values = [2, 1, 3]
//   x = [[1, 1], [2, 2], [3, 3]]  ->  y = a x = [[4, 4], [10, 10]]
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dgcn::cpu {

// Note [bf16 SpMM]
// A bfloat16 is the upper half of a float32, so widening it is a 16-bit
// shift (exact) and the kernel reads half the bytes per row, the reads that
// bound it. Every sum runs in float32 in the same order as the float32
// kernel's, and a bf16 y is rounded once, at the end of its row: a bf16 y is
// exactly the float32 kernel's y on the widened x, rounded to nearest even.
// Rounding is done with integer arithmetic (c10::BFloat16's rule, NaN ->
// 0x7FC0), not with AVX512-BF16's VCVTNEPS2BF16, which flushes denormals:
// the same bits on every CPU, with or without bf16 instructions.

// A bfloat16 as its 16 bits, layout-compatible with c10::BFloat16 (the torch
// front end casts between them) without depending on LibTorch.
struct Bf16 {
  uint16_t bits = 0;
};
static_assert(sizeof(Bf16) == 2);

inline float to_float(float v) {
  return v;
}
inline float to_float(Bf16 v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v.bits) << 16);
}

// Round to nearest, ties to even (c10::BFloat16's round_to_nearest_even).
inline Bf16 to_bf16(float v) {
  if (std::isnan(v)) return Bf16{0x7FC0};
  const uint32_t u = std::bit_cast<uint32_t>(v);
  return Bf16{static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}

// A CSR matrix over borrowed arrays: row r holds entries [indptr[r],
// indptr[r+1]) with column ids indices[e] in [0, num_cols) and weights
// values[e] (values == nullptr: every weight is 1).
template <class Index>
struct CsrRef {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  const int64_t* indptr = nullptr;
  const Index* indices = nullptr;
  const float* values = nullptr;
  int64_t nnz() const { return num_rows == 0 ? 0 : indptr[num_rows] - indptr[0]; }
};

// y[r, :] = sum_e values[e] * x[indices[e], :] for r in [row_begin, row_end).
// x is [num_cols x f] and y [num_rows x f], row-major with row strides ldx and
// ldy (>= f). Each row is summed in entry order by one thread, so the result
// does not depend on how rows are split. An empty row gives zeros.
// In (x) and Out (y) are float or Bf16, in any combination (Note [bf16
// SpMM]); ldx and ldy count elements of their own type.
template <class Index, class In, class Out>
void spmm_rows(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, int64_t f,
               int64_t row_begin, int64_t row_end);

// The portable loop spmm_rows falls back to without AVX-512 (compiled for
// AVX2 and baseline x86-64); exposed so the tests cover it on any CPU.
template <class Index, class In, class Out>
void spmm_rows_portable(const CsrRef<Index>& a, const In* x, int64_t ldx, Out* y, int64_t ldy, int64_t f,
                        int64_t row_begin, int64_t row_end);

// Row boundaries [0 = b_0 <= b_1 <= ... <= b_parts = num_rows] that split the
// rows into `parts` ranges of about equal work (entries + rows).
std::vector<int64_t> balanced_row_splits(const int64_t* indptr, int64_t num_rows, int64_t parts);

// The CSR of aᵀ (a.num_cols rows, a.num_rows columns) written into
// out_indptr [num_cols + 1], out_indices [nnz], out_values [nnz] (skipped
// when a.values is null). Entries of each output row come in increasing
// input-row order (a stable counting sort), so SpMM over the transpose sums
// in a fixed order: the backward pass stays deterministic.
template <class Index>
void transpose(const CsrRef<Index>& a, int64_t* out_indptr, Index* out_indices, float* out_values);

// y = aᵀ x computed by scattering each row of x into y, without building the
// transpose; y [num_cols x f] must be zeroed by the caller. Serial: a
// parallel scatter needs atomics or per-thread copies, and either makes the
// summation order depend on the threads. Kept to measure against transpose()
// + spmm_rows (see the SpMM benchmark), not used in training. x float or
// Bf16; y float (the scatter accumulates in y, so it cannot be bf16).
template <class Index, class In>
void spmm_transpose_scatter(const CsrRef<Index>& a, const In* x, int64_t ldx, float* y, int64_t ldy,
                            int64_t f);

// The instruction set the kernels run with on this CPU: "avx512", "avx2" or "baseline".
const char* simd_level();

}  // namespace dgcn::cpu
