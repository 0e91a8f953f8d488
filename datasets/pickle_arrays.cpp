// The values of a loaded pickle (datasets/pickle.h): numpy arrays decoded by
// the .npy rules and matrices, dense or scipy CSR, as dense rows. The opcode
// machine that builds the values is in pickle.cpp.
#include "datasets/pickle.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "datasets/npy.h"

namespace dgcn::detail::pickle {
namespace {

// A pickled array as an NpyArray: its dtype, memory order and shape checked
// and its bytes decoded by the .npy reader's rules (datasets/npy.h), so both
// containers read every byte order and dimension count alike.
NpyArray decoded_array(const Pickle& p, Ref ref, const std::string& field) {
  const Value& a = p.expect(ref, Kind::kArray, field);
  const Value& dtype = p.at(a.dtype);
  const std::string what = fmt::format("{}: {}", p.what(), field);
  DGCN_CHECK(dtype.kind == Kind::kDtype, "{}: an array that was never filled", what);
  NpyHeader header = make_npy_header(dtype.text, a.fortran, a.shape, what);
  return decode_npy(std::move(header), Buffer::copy_of(std::span<const char>(a.text)), what);
}

}  // namespace

std::vector<float> array_as_float32(const Pickle& p, Ref array, const std::string& field) {
  const std::string what = fmt::format("{}: {}", p.what(), field);
  const Buffer values = to_float32(decoded_array(p, array, field), what);
  const auto v = values.as<float>();
  return {v.begin(), v.end()};
}

std::vector<int64_t> array_as_int64(const Pickle& p, Ref array, const std::string& field) {
  return to_int64(decoded_array(p, array, field), fmt::format("{}: {}", p.what(), field));
}

DenseMatrix as_dense_matrix(const Pickle& p, Ref value, const std::string& field, uint64_t max_bytes) {
  DenseMatrix m;
  const Value& v = p.at(value);
  auto check_size = [&](int64_t rows, int64_t cols) {
    DGCN_CHECK(rows >= 0 && cols >= 0 && static_cast<uint64_t>(rows) <= max_bytes / 8 &&
                   (cols == 0 || static_cast<uint64_t>(rows) <= max_bytes / 4 / static_cast<uint64_t>(cols)),
               "{}: {} claims {} x {} values, more than this file can hold", p.what(), field, rows, cols);
  };
  if (v.kind == Kind::kArray) {
    DGCN_CHECK(v.shape.size() == 2, "{}: {} has {} dimensions, expected a matrix", p.what(), field,
               v.shape.size());
    m.rows = v.shape[0], m.cols = v.shape[1];
    check_size(m.rows, m.cols);
    m.values = array_as_float32(p, value, field);
    return m;
  }
  DGCN_CHECK(v.kind == Kind::kObject, "{}: {} is a {}, expected a numpy array or a scipy csr_matrix",
             p.what(), field, kind_name(v.kind));
  auto part = [&](const char* name) -> Ref {
    const Ref* r = p.find(value, name);
    DGCN_CHECK(r != nullptr, "{}: {} (csr_matrix) has no '{}'", p.what(), field, name);
    return *r;
  };
  const Value& shape = p.expect(part("_shape"), Kind::kTuple, field + "._shape");
  DGCN_CHECK(shape.items.size() == 2, "{}: {}._shape has {} entries", p.what(), field, shape.items.size());
  m.rows = p.as_int(shape.items[0], field + "._shape[0]");
  m.cols = p.as_int(shape.items[1], field + "._shape[1]");
  check_size(m.rows, m.cols);
  const std::vector<float> data = array_as_float32(p, part("data"), field + ".data");
  const std::vector<int64_t> indices = array_as_int64(p, part("indices"), field + ".indices");
  const std::vector<int64_t> indptr = array_as_int64(p, part("indptr"), field + ".indptr");
  DGCN_CHECK(static_cast<int64_t>(indptr.size()) == m.rows + 1, "{}: {}.indptr has {} entries for {} rows",
             p.what(), field, indptr.size(), m.rows);
  DGCN_CHECK(indices.size() == data.size() && indptr.front() == 0 &&
                 indptr.back() == static_cast<int64_t>(data.size()),
             "{}: {}: {} data, {} indices, indptr from {} to {}: they must agree", p.what(), field,
             data.size(), indices.size(), indptr.front(), indptr.back());
  // Monotone from 0 to nnz before any entry is read: every row's range then lies in [0, nnz).
  for (int64_t r = 0; r < m.rows; ++r) {
    DGCN_CHECK(indptr[r] <= indptr[r + 1], "{}: {}.indptr decreases at row {}", p.what(), field, r);
  }
  m.values.assign(static_cast<size_t>(m.rows * m.cols), 0.0f);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
      DGCN_CHECK(indices[e] >= 0 && indices[e] < m.cols, "{}: {}: row {} has column {}, not in [0, {})",
                 p.what(), field, r, indices[e], m.cols);
      m.values[static_cast<size_t>(r * m.cols + indices[e])] += data[e];  // duplicates add up, as todense()
    }
  }
  return m;
}

}  // namespace dgcn::detail::pickle
