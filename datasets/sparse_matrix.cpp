#include "datasets/sparse_matrix.h"

#include <fmt/format.h>

#include "base/error.h"

namespace dgcn {

SparseMatrix read_sparse_csr(const NpzArchive& npz, const CsrKeys& keys, bool with_values) {
  const std::string& path = npz.path();
  SparseMatrix m;
  {
    NpyArray shape = npz.array(keys.shape);
    std::vector<int64_t> s = to_int64(shape, fmt::format("{}: {}", path, keys.shape));
    DGCN_CHECK(s.size() == 2 && s[0] >= 0 && s[1] >= 0, "{}: {} is {}, expected two non-negative sizes", path,
               keys.shape, fmt::format("[{}]", fmt::join(s, ", ")));
    m.rows = s[0];
    m.cols = s[1];
  }
  {
    NpyArray indptr = npz.array(keys.indptr);
    // Compared as count - 1 == rows: rows + 1 overflows for a shape of INT64_MAX.
    DGCN_CHECK(indptr.shape().size() == 1 && indptr.count() >= 1 && indptr.count() - 1 == m.rows,
               "{}: {} has shape {}, expected ({},) for {} rows", path, keys.indptr,
               indptr.header.shape_string(), static_cast<uint64_t>(m.rows) + 1, m.rows);
    m.indptr = to_int64(indptr, fmt::format("{}: {}", path, keys.indptr));
  }
  {
    NpyArray indices = npz.array(keys.indices);
    DGCN_CHECK(indices.shape().size() == 1, "{}: {} has shape {}, expected one dimension", path, keys.indices,
               indices.header.shape_string());
    m.indices = to_int64(indices, fmt::format("{}: {}", path, keys.indices));
  }
  const int64_t nnz = m.nnz();
  DGCN_CHECK(m.indptr[0] == 0, "{}: {}[0] is {}, expected 0", path, keys.indptr, m.indptr[0]);
  for (int64_t r = 0; r < m.rows; ++r) {
    DGCN_CHECK(m.indptr[r + 1] >= m.indptr[r], "{}: {} decreases at row {} ({} then {})", path, keys.indptr,
               r, m.indptr[r], m.indptr[r + 1]);
  }
  DGCN_CHECK(m.indptr[m.rows] == nnz, "{}: {} ends at {}, but {} has {} entries", path, keys.indptr,
             m.indptr[m.rows], keys.indices, nnz);
  for (int64_t e = 0; e < nnz; ++e) {
    DGCN_CHECK(m.indices[e] >= 0 && m.indices[e] < m.cols, "{}: {}[{}] = {} is not a column id in [0, {})",
               path, keys.indices, e, m.indices[e], m.cols);
  }
  // The values are only read when wanted (an adjacency's are ignored).
  NpyHeader data = npz.header(keys.data);
  DGCN_CHECK(data.shape.size() == 1 && data.count() == nnz, "{}: {} has shape {}, expected ({},)", path,
             keys.data, data.shape_string(), nnz);
  if (with_values) m.values = to_float32(npz.array(keys.data), fmt::format("{}: {}", path, keys.data));
  return m;
}

std::vector<int64_t> row_ids(const SparseMatrix& m) {
  std::vector<int64_t> rows(static_cast<size_t>(m.nnz()));
  for (int64_t r = 0; r < m.rows; ++r) {
    std::fill(rows.begin() + m.indptr[r], rows.begin() + m.indptr[r + 1], r);
  }
  return rows;
}

Buffer to_dense(const SparseMatrix& m, const std::string& what, uint64_t max_bytes) {
  DGCN_ASSERT(static_cast<int64_t>(m.values.size() / sizeof(float)) == m.nnz());
  // A few bytes of sparse matrix can claim any dense size: checked before the
  // allocation, without overflow.
  const auto rows = static_cast<uint64_t>(m.rows), cols = static_cast<uint64_t>(m.cols);
  DGCN_CHECK(cols == 0 || rows <= max_bytes / sizeof(float) / cols,
             "{}: a dense {} x {} float32 matrix needs {:.1f} GB, more than the {:.1f} GB allowed", what,
             m.rows, m.cols, static_cast<double>(rows) * static_cast<double>(cols) * sizeof(float) / 1e9,
             static_cast<double>(max_bytes) / 1e9);
  MutableBuffer out = Buffer::zeros<float>(static_cast<size_t>(m.rows * m.cols));
  auto dense = out.as_mutable<float>();
  auto values = m.values.as<float>();
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t e = m.indptr[r]; e < m.indptr[r + 1]; ++e) dense[r * m.cols + m.indices[e]] += values[e];
  }
  return out;
}

}  // namespace dgcn
