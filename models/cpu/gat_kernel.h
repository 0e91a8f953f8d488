// CPU backend of the GAT kernels (models/gat_kernels.h): plain C++ over raw
// arrays, no LibTorch. Every function handles one range of rows (or, over
// the transpose, columns); the front end splits ranges across threads with
// cpu::balanced_row_splits, and each output element is summed in entry order
// by one thread, so results do not depend on the thread count.
//
// Layouts (H heads, C features per head, a CsrRef a of num_dst x num_src
// with nnz entries; a.values is not read):
//   a_src [num_src x H], a_dst [num_dst x H]      per-node attention terms
//   e, alpha [nnz x H]                             per-edge, per-head values
//   x [num_src x H*C], out [num_dst x H*C]        features, head-major in a row
// all row-major and contiguous.
//
// Example (H = 1): a row 0 with entries to src 0 and 2, a_dst[0] = 1,
// a_src = [0, 5, -2]: e = [LeakyReLU(1 + 0), LeakyReLU(1 - 2)] = [1, -0.2],
// alpha = softmax = [0.769, 0.231], out[0] = 0.769 x[0] + 0.231 x[2].
#pragma once

#include <cstdint>

#include "models/cpu/spmm_kernel.h"

namespace dgcn::cpu {

// The transpose of a's pattern with, for each entry, the entry of a it came
// from: row j of the transpose lists the rows i with an entry (i, j), in
// increasing i, in rows[t_indptr[j] .. t_indptr[j+1]) and their entry ids of
// a in edge[...]. Filled by transpose_edges (a stable counting sort).
template <class Index>
struct EdgeTranspose {
  int64_t num_cols = 0;             // a.num_cols: rows of the transpose
  const int64_t* indptr = nullptr;  // [num_cols + 1]
  const Index* rows = nullptr;      // [nnz] row of a
  const int64_t* edge = nullptr;    // [nnz] entry id of a
};
template <class Index>
void transpose_edges(const CsrRef<Index>& a, int64_t* t_indptr, Index* t_rows, int64_t* t_edge);

// (a) Edge scores, the SDDMM-like step of GAT:
//   e[k, h] = LeakyReLU(a_dst[i, h] + a_src[j, h]) for entry k = (i, j).
template <class Index>
void gat_scores_rows(const CsrRef<Index>& a, const float* a_src, const float* a_dst, int64_t heads,
                     float negative_slope, float* e, int64_t row_begin, int64_t row_end);
// Its backward, the row side: ds[k, h] = de[k, h] * LeakyReLU'(pre-activation)
// (slope where the pre-activation is <= 0, as torch's leaky_relu backward)
// and da_dst[i, h] = sum over i's entries of ds. da_src is the column sum of
// ds, column_sums over the transpose.
template <class Index>
void gat_scores_backward_rows(const CsrRef<Index>& a, const float* a_src, const float* a_dst, const float* de,
                              int64_t heads, float negative_slope, float* ds, float* da_dst,
                              int64_t row_begin, int64_t row_end);
// out[j, h] = sum over the entries k of column j (in transpose order) of v[k, h].
template <class Index>
void column_sums(const EdgeTranspose<Index>& t, const float* v, int64_t heads, float* out, int64_t col_begin,
                 int64_t col_end);

// (b) Softmax of e over each row's entries, per head, max-subtracted, in
// fp32. An empty row writes nothing.
void edge_softmax_rows(const int64_t* indptr, const float* e, int64_t heads, float* alpha, int64_t row_begin,
                       int64_t row_end);
// Its backward: de[k, h] = alpha[k, h] (dalpha[k, h] - sum_row alpha dalpha).
void edge_softmax_backward_rows(const int64_t* indptr, const float* alpha, const float* dalpha, int64_t heads,
                                float* de, int64_t row_begin, int64_t row_end);

// (c) The multi-head weighted SpMM:
//   out[i, h*C + c] = sum over i's entries k = (i, j) of alpha[k, h] x[j, h*C + c].
// An empty row gives zeros.
template <class Index>
void gat_spmm_rows(const CsrRef<Index>& a, const float* alpha, const float* x, int64_t heads,
                   int64_t channels, float* out, int64_t row_begin, int64_t row_end);
// Its backward for alpha, an SDDMM: dalpha[k, h] = <dout[i, h, :], x[j, h, :]>.
template <class Index>
void gat_spmm_alpha_grad_rows(const CsrRef<Index>& a, const float* dout, const float* x, int64_t heads,
                              int64_t channels, float* dalpha, int64_t row_begin, int64_t row_end);
// Its backward for x, over the transpose (Note [SpMM backward]):
//   dx[j, h*C + c] = sum over the entries k = (i, j) of column j of alpha[k, h] dout[i, h*C + c].
template <class Index>
void gat_spmm_x_grad_cols(const EdgeTranspose<Index>& t, const float* alpha, const float* dout, int64_t heads,
                          int64_t channels, float* dx, int64_t col_begin, int64_t col_end);

}  // namespace dgcn::cpu
