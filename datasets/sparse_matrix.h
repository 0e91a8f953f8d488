// scipy.sparse CSR matrices stored as separate arrays of an .npz archive
// (scipy.sparse.save_npz: data/indices/indptr/shape/format; gnn-benchmark:
// adj_data/adj_indices/adj_indptr/adj_shape), validated before use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/buffer.h"
#include "datasets/npz.h"

namespace dgcn {

struct CsrKeys {
  std::string data, indices, indptr, shape;
};

struct SparseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> indptr;   // rows + 1 entries, 0 .. nnz, non-decreasing
  std::vector<int64_t> indices;  // nnz column ids, each in [0, cols)
  Buffer values;                 // nnz float32, only when asked for

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
};

// Reads and checks one matrix: shape is two non-negative ints, indptr has
// rows + 1 entries starting at 0, never decreasing, ending at nnz = the length
// of indices (and of data), every column id in [0, cols). Errors name the
// archive, the array and the first offending position and value.
SparseMatrix read_sparse_csr(const NpzArchive& npz, const CsrKeys& keys, bool with_values);

// Source ids of the matrix's entries in storage order: row r repeated
// indptr[r + 1] - indptr[r] times (the destinations are `indices`).
std::vector<int64_t> row_ids(const SparseMatrix& m);

// The matrix as dense row-major float32 [rows x cols] (repeated entries are
// summed, as scipy's toarray() does). Needs values. A matrix whose dense
// form exceeds max_bytes is an error naming `what`, before any allocation.
Buffer to_dense(const SparseMatrix& m, const std::string& what, uint64_t max_bytes);

}  // namespace dgcn
