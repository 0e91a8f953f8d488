#include "sampling/block_edges.h"

#include <algorithm>

#include "base/error.h"

namespace dgcn {

void block_to_edge_index(const Block& block, int64_t num_nodes, std::span<int64_t> src,
                         std::span<int64_t> dst, std::span<int64_t> colptr) {
  const int64_t m = block.num_edges();
  DGCN_CHECK(num_nodes >= block.num_dst, "block_to_edge_index: {} nodes for a block of {} rows", num_nodes,
             block.num_dst);
  DGCN_CHECK(static_cast<int64_t>(src.size()) == m && static_cast<int64_t>(dst.size()) == m,
             "block_to_edge_index: src and dst hold {} and {} entries for {} edges", src.size(), dst.size(),
             m);
  DGCN_CHECK(static_cast<int64_t>(colptr.size()) == num_nodes + 1,
             "block_to_edge_index: colptr holds {} entries for {} nodes (expected nodes + 1)", colptr.size(),
             num_nodes);
  for (int64_t r = 0; r < block.num_dst; ++r) {
    for (int64_t k = block.indptr[r]; k < block.indptr[r + 1]; ++k) {
      src[k] = block.indices[k];
      dst[k] = r;
    }
  }
  std::copy(block.indptr.begin(), block.indptr.end(), colptr.begin());
  std::fill(colptr.begin() + block.num_dst + 1, colptr.end(), m);
}

PygArrays lay_out_for_pyg(const SampledBatch& batch, std::span<const int32_t> full_degree,
                          const NodeLabels& labels, BatchMemoryPool& pool) {
  DGCN_CHECK(!batch.blocks.empty(), "lay_out_for_pyg: batch {} has no blocks", batch.index);
  DGCN_CHECK(labels.classes.size() == labels.split_bits.size(),
             "lay_out_for_pyg: {} node classes but {} split bytes", labels.classes.size(),
             labels.split_bits.size());
  const bool fetched = !batch.degrees.empty();
  const int64_t num = static_cast<int64_t>(batch.n_id.size());
  DGCN_CHECK(!fetched || static_cast<int64_t>(batch.degrees.size()) == num,
             "lay_out_for_pyg: {} degrees for {} nodes", batch.degrees.size(), num);
  const auto bound = [&](size_t size, const char* what) {
    for (const int64_t v : batch.n_id) {
      DGCN_CHECK(v >= 0 && static_cast<size_t>(v) < size, "lay_out_for_pyg: node {} is outside the {} {}", v,
                 size, what);
    }
  };
  if (!fetched) bound(full_degree.size(), "degrees");
  const bool with_labels = !labels.empty();
  if (with_labels) bound(labels.classes.size(), "node labels");

  const Block& block = batch.blocks.front();
  const int64_t m = block.num_edges();
  // In 8-byte words: n_id, src, dst, colptr, degree (int32, two a word), then
  // y and the masks (bytes).
  const int64_t words = num + 2 * m + (num + 1) + (num + 1) / 2 + (with_labels ? num + (3 * num + 7) / 8 : 0);
  // words x 2 floats: the pool counts in rows of 4-byte floats.
  BatchMemory memory = pool.acquire(words, 2, 0, 0);
  auto* base = reinterpret_cast<int64_t*>(memory.features.data());
  const auto n = static_cast<size_t>(num);
  PygArrays out;
  out.n_id = {base, n};
  out.src = {base + num, static_cast<size_t>(m)};
  out.dst = {base + num + m, static_cast<size_t>(m)};
  out.colptr = {base + num + 2 * m, n + 1};
  int64_t* after_colptr = base + 2 * num + 2 * m + 1;
  out.degree = {reinterpret_cast<int32_t*>(after_colptr), n};
  std::copy(batch.n_id.begin(), batch.n_id.end(), out.n_id.begin());
  block_to_edge_index(block, num, out.src, out.dst, out.colptr);
  if (fetched) {
    std::copy(batch.degrees.begin(), batch.degrees.end(), out.degree.begin());
  } else {
    for (size_t i = 0; i < n; ++i) out.degree[i] = full_degree[batch.n_id[i]];
  }
  if (with_labels) {
    out.y = {after_colptr + (num + 1) / 2, n};
    out.masks = {reinterpret_cast<bool*>(out.y.data() + num), 3 * n};
    for (size_t i = 0; i < n; ++i) {
      const auto v = static_cast<size_t>(batch.n_id[i]);
      out.y[i] = labels.classes[v];
      const uint8_t bits = labels.split_bits[v];
      for (size_t k = 0; k < 3; ++k) out.masks[k * n + i] = ((bits >> k) & 1) != 0;
    }
  }
  out.lease = std::move(memory.lease);
  return out;
}

}  // namespace dgcn
