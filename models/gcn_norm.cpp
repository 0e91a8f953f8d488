#include "models/gcn_norm.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace dgcn {
namespace {

constexpr int64_t kRowChunk = 4096;

// Writes row r of the normalized CSR: the self-loop, then `k` neighbours
// given by neighbour(t) -> (output index, degree of that neighbour), with the
// full degree `d` of the row's node (Note [GCN normalization of a sampled block]).
template <class Neighbour>
inline void write_row(int64_t pos, int32_t self, int64_t d, int64_t k, const NormalizedCsrOut& out,
                      Neighbour&& neighbour) {
  const double inv_self = 1.0 / std::sqrt(static_cast<double>(d) + 1.0);
  out.indices[pos] = self;
  out.values[pos] = static_cast<float>(inv_self * inv_self);
  const double scale = k > 0 ? static_cast<double>(d) / static_cast<double>(k) * inv_self : 0.0;
  for (int64_t t = 0; t < k; ++t) {
    auto [j, dj] = neighbour(t);
    out.indices[pos + 1 + t] = j;
    out.values[pos + 1 + t] = static_cast<float>(scale / std::sqrt(static_cast<double>(dj) + 1.0));
  }
}

}  // namespace

const char* gcn_norm_name(GcnNorm norm) {
  return norm == GcnNorm::kFullGraph ? "full" : "block";
}

GcnNorm parse_gcn_norm(const std::string& s) {
  if (s == "full") return GcnNorm::kFullGraph;
  if (s == "block") return GcnNorm::kBlock;
  throw Error(fmt::format("gcn norm: unknown normalization '{}' (expected 'full' or 'block')", s));
}

void batch_degrees(const SampledBatch& batch, GcnNorm norm, std::span<const int32_t> full_degree,
                   std::span<int32_t> out) {
  const auto n = static_cast<int64_t>(batch.n_id.size());
  DGCN_CHECK(static_cast<int64_t>(out.size()) >= n, "gcn norm: degree output has {} entries for {} nodes",
             out.size(), n);
  if (norm == GcnNorm::kFullGraph && !batch.degrees.empty()) {
    // A partitioned graph's batch brings its nodes' degrees along.
    DGCN_CHECK(static_cast<int64_t>(batch.degrees.size()) == n,
               "gcn norm: batch {} has {} degrees for {} nodes", batch.index, batch.degrees.size(), n);
    std::copy(batch.degrees.begin(), batch.degrees.end(), out.begin());
    return;
  }
  if (norm == GcnNorm::kFullGraph) {
    const auto num_nodes = static_cast<int64_t>(full_degree.size());
    for (int64_t j = 0; j < n; ++j) {
      const int64_t v = batch.n_id[j];
      DGCN_CHECK(v >= 0 && v < num_nodes, "gcn norm: batch {} node n_id[{}] = {} is not in [0, {})",
                 batch.index, j, v, num_nodes);
      out[j] = full_degree[v];
    }
    return;
  }
  // Every node's sampled neighbours form its row in blocks[0] (a node is
  // expanded once, at the hop that reached it); nodes beyond are leaves.
  int64_t expanded = 0;
  if (!batch.blocks.empty()) {
    const Block& b = batch.blocks.front();
    expanded = b.num_dst;
    for (int64_t r = 0; r < expanded; ++r) out[r] = static_cast<int32_t>(b.indptr[r + 1] - b.indptr[r]);
  }
  for (int64_t j = expanded; j < n; ++j) out[j] = 0;
}

void normalize_block(const Block& block, std::span<const int32_t> src_degree, const NormalizedCsrOut& out,
                     const ChunkLoop& loop) {
  const int64_t rows = block.num_dst;
  DGCN_CHECK(static_cast<int64_t>(block.indptr.size()) == rows + 1,
             "gcn norm: block indptr has {} entries for {} dst nodes", block.indptr.size(), rows);
  DGCN_CHECK(static_cast<int64_t>(src_degree.size()) >= block.num_src,
             "gcn norm: {} degrees for a block with {} src nodes", src_degree.size(), block.num_src);
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == rows + 1 &&
                 static_cast<int64_t>(out.indices.size()) == normalized_nnz(block) &&
                 static_cast<int64_t>(out.values.size()) == normalized_nnz(block),
             "gcn norm: output arrays sized {}/{}/{}, expected {}/{}/{}", out.indptr.size(),
             out.indices.size(), out.values.size(), rows + 1, normalized_nnz(block), normalized_nnz(block));
  for (int64_t r = 0; r <= rows; ++r) out.indptr[r] = block.indptr[r] + r;
  loop(rows, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t e0 = block.indptr[r];
      const int64_t k = block.indptr[r + 1] - e0;
      const int64_t d = src_degree[r];
      DGCN_CHECK(k <= d,
                 "gcn norm: dst node {} has {} sampled neighbours but degree {} (degrees of another graph?)",
                 r, k, d);
      write_row(out.indptr[r], static_cast<int32_t>(r), d, k, out, [&](int64_t t) {
        const int32_t j = block.indices[e0 + t];
        return std::pair<int32_t, int32_t>{j, src_degree[j]};
      });
    }
  });
}

int64_t full_rows_nnz(const Csr& graph, std::span<const int64_t> rows) {
  int64_t nnz = static_cast<int64_t>(rows.size());
  for (int64_t v : rows) nnz += graph.degree(v);
  return nnz;
}

void normalize_full_rows(const Csr& graph, std::span<const int32_t> degree, std::span<const int64_t> rows,
                         const NormalizedCsrOut& out, const ChunkLoop& loop) {
  DGCN_CHECK(graph.num_cols() <= INT32_MAX, "gcn norm: {} nodes do not fit the int32 ids of full-graph rows",
             graph.num_cols());
  const auto n = static_cast<int64_t>(rows.size());
  DGCN_CHECK(static_cast<int64_t>(out.indptr.size()) == n + 1,
             "gcn norm: indptr output has {} entries for {} rows", out.indptr.size(), n);
  const auto ptr = graph.indptr();
  out.indptr[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = rows[i];
    DGCN_CHECK(v >= 0 && v < graph.num_nodes(), "gcn norm: row {} is not a node id in [0, {})", v,
               graph.num_nodes());
    out.indptr[i + 1] = out.indptr[i] + 1 + (ptr[v + 1] - ptr[v]);
  }
  DGCN_CHECK(static_cast<int64_t>(out.indices.size()) == out.indptr[n] &&
                 static_cast<int64_t>(out.values.size()) == out.indptr[n],
             "gcn norm: indices/values outputs have {}/{} entries, expected {}", out.indices.size(),
             out.values.size(), out.indptr[n]);
  graph.visit_indices([&](auto indices) {
    loop(n, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t v = rows[i];
        const int64_t e0 = ptr[v];
        const int64_t d = ptr[v + 1] - e0;
        write_row(out.indptr[i], static_cast<int32_t>(v), degree[v], d, out, [&](int64_t t) {
          const auto j = static_cast<int32_t>(indices[e0 + t]);
          return std::pair<int32_t, int32_t>{j, degree[j]};
        });
      }
    });
  });
}

}  // namespace dgcn
