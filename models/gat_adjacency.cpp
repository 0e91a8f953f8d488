#include "models/gat_adjacency.h"

#include "base/error.h"

namespace dgcn {
namespace {

constexpr int64_t kRowChunk = 4096;

// Row length with one self-loop: the neighbours other than `self`, plus 1.
template <class Index>
int64_t row_length(const Index* begin, const Index* end, int64_t self) {
  int64_t n = 1;
  for (const Index* p = begin; p != end; ++p) n += static_cast<int64_t>(*p) != self ? 1 : 0;
  return n;
}

// Writes `self`, then the entries of [begin, end) other than `self`, at `pos`.
template <class Index>
void write_row(const Index* begin, const Index* end, int64_t self, int64_t pos, const NormalizedCsrOut& out) {
  out.indices[pos] = static_cast<int32_t>(self);
  out.values[pos] = 1.0F;
  for (const Index* p = begin; p != end; ++p) {
    if (static_cast<int64_t>(*p) == self) continue;
    ++pos;
    out.indices[pos] = static_cast<int32_t>(*p);
    out.values[pos] = 1.0F;
  }
}

void check_out(const NormalizedCsrOut& out, int64_t rows, int64_t nnz) {
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == rows + 1 &&
                 static_cast<int64_t>(out.indices.size()) == nnz &&
                 static_cast<int64_t>(out.values.size()) == nnz,
             "gat structure: output arrays sized {}/{}/{}, expected {}/{}/{}", out.indptr.size(),
             out.indices.size(), out.values.size(), rows + 1, nnz, nnz);
}

}  // namespace

int64_t gat_block_nnz(const Block& block) {
  int64_t nnz = 0;
  for (int64_t r = 0; r < block.num_dst; ++r)
    nnz += row_length(block.indices.data() + block.indptr[r], block.indices.data() + block.indptr[r + 1], r);
  return nnz;
}

void gat_block_structure(const Block& block, const NormalizedCsrOut& out, const ChunkLoop& loop) {
  const int64_t rows = block.num_dst;
  DGCN_CHECK(static_cast<int64_t>(block.indptr.size()) == rows + 1,
             "gat structure: block indptr has {} entries for {} dst nodes", block.indptr.size(), rows);
  DGCN_CHECK(block.num_dst <= block.num_src,
             "gat structure: a block's dst nodes are its first src nodes, but it has {} dst and {} src",
             block.num_dst, block.num_src);
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == rows + 1,
             "gat structure: indptr output has {} entries for {} rows", out.indptr.size(), rows);
  const int32_t* idx = block.indices.data();
  out.indptr[0] = 0;
  for (int64_t r = 0; r < rows; ++r)
    out.indptr[r + 1] = out.indptr[r] + row_length(idx + block.indptr[r], idx + block.indptr[r + 1], r);
  check_out(out, rows, out.indptr[rows]);
  loop(rows, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      write_row(idx + block.indptr[r], idx + block.indptr[r + 1], r, out.indptr[r], out);
  });
}

int64_t gat_full_rows_nnz(const Csr& graph, std::span<const int64_t> rows) {
  const auto ptr = graph.indptr();
  int64_t nnz = 0;
  graph.visit_indices([&](auto indices) {
    for (int64_t v : rows) {
      DGCN_CHECK(v >= 0 && v < graph.num_nodes(), "gat structure: row {} is not a node id in [0, {})", v,
                 graph.num_nodes());
      nnz += row_length(indices.data() + ptr[v], indices.data() + ptr[v + 1], v);
    }
  });
  return nnz;
}

void gat_full_rows_structure(const Csr& graph, std::span<const int64_t> rows, const NormalizedCsrOut& out,
                             const ChunkLoop& loop) {
  DGCN_CHECK(graph.num_cols() <= INT32_MAX,
             "gat structure: {} nodes do not fit the int32 ids of full-graph rows", graph.num_cols());
  const auto n = static_cast<int64_t>(rows.size());
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == n + 1,
             "gat structure: indptr output has {} entries for {} rows", out.indptr.size(), n);
  const auto ptr = graph.indptr();
  graph.visit_indices([&](auto indices) {
    out.indptr[0] = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = rows[i];
      DGCN_CHECK(v >= 0 && v < graph.num_nodes(), "gat structure: row {} is not a node id in [0, {})", v,
                 graph.num_nodes());
      out.indptr[i + 1] = out.indptr[i] + row_length(indices.data() + ptr[v], indices.data() + ptr[v + 1], v);
    }
    check_out(out, n, out.indptr[n]);
    loop(n, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t v = rows[i];
        write_row(indices.data() + ptr[v], indices.data() + ptr[v + 1], v, out.indptr[i], out);
      }
    });
  });
}

}  // namespace dgcn
