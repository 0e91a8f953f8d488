// Test helper: the SampledBatch a neighbour sampler would produce with every
// fanout at least the maximum degree (every neighbour of every expanded
// node), built directly from the CSR following sampling/sampled_batch.h.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/csr.h"
#include "sampling/sampled_batch.h"

namespace dgcn::testing {

inline SampledBatch full_neighbourhood_batch(const Csr& graph, const std::vector<int64_t>& seeds,
                                             int64_t num_layers) {
  SampledBatch b;
  b.num_seeds = static_cast<int64_t>(seeds.size());
  std::unordered_map<int64_t, int32_t> local;
  for (int64_t s : seeds) {
    local.emplace(s, static_cast<int32_t>(b.n_id.size()));
    b.n_id.push_back(s);
  }
  b.num_nodes_per_hop.push_back(b.num_seeds);
  std::vector<std::vector<int32_t>> edges;  // per expanded local node: its neighbours (local ids)
  int64_t begin = 0;
  for (int64_t h = 0; h < num_layers; ++h) {
    const int64_t end = static_cast<int64_t>(b.n_id.size());
    int64_t sampled = 0;
    for (int64_t u = begin; u < end; ++u) {
      std::vector<int32_t> row;
      const auto ptr = graph.indptr();
      graph.visit_indices([&](auto indices) {
        for (int64_t e = ptr[b.n_id[u]]; e < ptr[b.n_id[u] + 1]; ++e) {
          const int64_t v = indices[e];
          auto [it, inserted] = local.emplace(v, static_cast<int32_t>(b.n_id.size()));
          if (inserted) b.n_id.push_back(v);
          row.push_back(it->second);
        }
      });
      sampled += static_cast<int64_t>(row.size());
      edges.push_back(std::move(row));
    }
    b.num_edges_per_hop.push_back(sampled);
    b.num_nodes_per_hop.push_back(static_cast<int64_t>(b.n_id.size()) - end);
    begin = end;
  }
  for (int64_t l = 0; l < num_layers; ++l) {
    Block block;
    block.num_dst = b.nodes_within(num_layers - 1 - l);
    block.num_src = b.nodes_within(num_layers - l);
    block.indptr.push_back(0);
    for (int64_t r = 0; r < block.num_dst; ++r) {
      for (int32_t j : edges[static_cast<size_t>(r)]) block.indices.push_back(j);
      block.indptr.push_back(static_cast<int64_t>(block.indices.size()));
    }
    b.blocks.push_back(std::move(block));
  }
  return b;
}

}  // namespace dgcn::testing
