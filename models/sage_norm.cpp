#include "models/sage_norm.h"

#include "base/error.h"

namespace dgcn {
namespace {

constexpr int64_t kRowChunk = 4096;

}  // namespace

void sage_mean_block(const Block& block, const NormalizedCsrOut& out, const ChunkLoop& loop) {
  const int64_t rows = block.num_dst;
  DGCN_CHECK(static_cast<int64_t>(block.indptr.size()) == rows + 1,
             "sage mean: block indptr has {} entries for {} dst nodes", block.indptr.size(), rows);
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == rows + 1 &&
                 static_cast<int64_t>(out.indices.size()) == sage_block_nnz(block) &&
                 static_cast<int64_t>(out.values.size()) == sage_block_nnz(block),
             "sage mean: output arrays sized {}/{}/{}, expected {}/{}/{}", out.indptr.size(),
             out.indices.size(), out.values.size(), rows + 1, sage_block_nnz(block), sage_block_nnz(block));
  for (int64_t r = 0; r <= rows; ++r) out.indptr[r] = block.indptr[r];
  loop(rows, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t e0 = block.indptr[r];
      const int64_t k = block.indptr[r + 1] - e0;
      const float w = k > 0 ? static_cast<float>(1.0 / static_cast<double>(k)) : 0.0F;
      for (int64_t e = e0; e < e0 + k; ++e) {
        out.indices[e] = block.indices[e];
        out.values[e] = w;
      }
    }
  });
}

int64_t sage_full_rows_nnz(const Csr& graph, std::span<const int64_t> rows) {
  int64_t nnz = 0;
  for (int64_t v : rows) nnz += graph.degree(v);
  return nnz;
}

void sage_mean_full_rows(const Csr& graph, std::span<const int64_t> rows, const NormalizedCsrOut& out,
                         const ChunkLoop& loop) {
  DGCN_CHECK(graph.num_cols() <= INT32_MAX, "sage mean: {} nodes do not fit the int32 ids of full-graph rows",
             graph.num_cols());
  const auto n = static_cast<int64_t>(rows.size());
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == n + 1,
             "sage mean: indptr output has {} entries for {} rows", out.indptr.size(), n);
  const auto ptr = graph.indptr();
  out.indptr[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = rows[i];
    DGCN_CHECK(v >= 0 && v < graph.num_nodes(), "sage mean: row {} is not a node id in [0, {})", v,
               graph.num_nodes());
    out.indptr[i + 1] = out.indptr[i] + (ptr[v + 1] - ptr[v]);
  }
  DGCN_CHECK(static_cast<int64_t>(out.indices.size()) == out.indptr[n] &&
                 static_cast<int64_t>(out.values.size()) == out.indptr[n],
             "sage mean: indices/values outputs have {}/{} entries, expected {}", out.indices.size(),
             out.values.size(), out.indptr[n]);
  graph.visit_indices([&](auto indices) {
    loop(n, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t v = rows[i];
        const int64_t d = ptr[v + 1] - ptr[v];
        const float w = d > 0 ? static_cast<float>(1.0 / static_cast<double>(d)) : 0.0F;
        for (int64_t t = 0; t < d; ++t) {
          out.indices[out.indptr[i] + t] = static_cast<int32_t>(indices[ptr[v] + t]);
          out.values[out.indptr[i] + t] = w;
        }
      }
    });
  });
}

}  // namespace dgcn
