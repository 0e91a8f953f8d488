// Graphs for the sampling tests beyond tests/fixtures.h: a random graph large
// enough that a hop spans many chunks (so the parallel paths run), and the
// global-id view of a sampled batch's edges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/random.h"
#include "fixtures.h"
#include "sampling/sampled_batch.h"

namespace dgcn::testing {

// n nodes, about n * avg_degree / 2 undirected edges whose endpoints follow a
// skewed (Chung-Lu-like) weight, so rows range from empty to a few hundred.
inline EdgeList skewed_random_edges(int64_t n, int64_t avg_degree, uint64_t seed) {
  EdgeList e{n, {}, {}};
  Rng rng(stream_key(seed, {1}));
  const int64_t m = n * avg_degree / 2;
  auto pick = [&] {
    // Squaring a uniform draw favours low ids: id ~ n * u^2.
    double u = rng.uniform();
    return std::min<int64_t>(n - 1, static_cast<int64_t>(static_cast<double>(n) * u * u));
  };
  for (int64_t i = 0; i < m; ++i) e.add(pick(), static_cast<int64_t>(rng.below(static_cast<uint64_t>(n))));
  return e;
}

// Every edge of block 0 as (global dst, global src), in storage order.
inline std::vector<std::pair<int64_t, int64_t>> global_edges(const SampledBatch& b) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const Block& full = b.blocks.at(0);
  for (int64_t r = 0; r < full.num_dst; ++r) {
    for (int64_t e = full.indptr[r]; e < full.indptr[r + 1]; ++e)
      out.emplace_back(b.n_id[r], b.n_id[full.indices[e]]);
  }
  return out;
}

// Whether two batches are equal in every node, count and block.
inline bool same_batch(const SampledBatch& a, const SampledBatch& b) {
  if (a.n_id != b.n_id || a.num_nodes_per_hop != b.num_nodes_per_hop ||
      a.num_edges_per_hop != b.num_edges_per_hop || a.blocks.size() != b.blocks.size())
    return false;
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    const Block &x = a.blocks[l], &y = b.blocks[l];
    if (x.num_dst != y.num_dst || x.num_src != y.num_src || x.indptr != y.indptr || x.indices != y.indices)
      return false;
  }
  return true;
}

}  // namespace dgcn::testing
