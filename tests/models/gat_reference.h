// Test helpers for the GAT and SAGE layers: random blocks and the dense
// formulation of GAT attention that the sparse kernels are checked against.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "models/spmm.h"
#include "sampling/sampled_batch.h"

namespace dgcn::testing {

// A block of num_dst x num_src with 0..max_deg distinct random src
// neighbours per dst row (local ids; a row may hold its own id, a self edge
// of the graph, and may be empty).
inline Block random_block(int64_t num_dst, int64_t num_src, int64_t max_deg, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Block b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.indptr.push_back(0);
  for (int64_t r = 0; r < num_dst; ++r) {
    const auto k = static_cast<int64_t>(rng() % static_cast<uint64_t>(max_deg + 1));
    std::vector<int32_t> row;
    while (static_cast<int64_t>(row.size()) < k) {
      const auto j = static_cast<int32_t>(rng() % static_cast<uint64_t>(num_src));
      bool seen = false;
      for (int32_t v : row) seen = seen || v == j;
      if (!seen) row.push_back(j);
    }
    b.indices.insert(b.indices.end(), row.begin(), row.end());
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  return b;
}

// The row of each entry of `a` (CPU), int64 [nnz].
inline torch::Tensor entry_rows(const CsrTensor& a) {
  const auto lengths = a.indptr.diff();
  return torch::repeat_interleave(torch::arange(a.num_rows, torch::kLong), lengths);
}

// a as a dense 0/1 mask [num_rows x num_cols] (bool).
inline torch::Tensor dense_mask(const CsrTensor& a) {
  auto m = torch::zeros({a.num_rows, a.num_cols}, torch::kBool);
  m.index_put_({entry_rows(a), a.indices.to(torch::kLong)}, true);
  return m;
}

// Dense GAT attention in double: scores on every (i, j) pair, -inf off the
// pattern, softmax over j. a_src [num_src x H], a_dst [num_dst x H] ->
// alpha [num_dst x num_src x H] (0 off the pattern).
inline torch::Tensor dense_attention(const CsrTensor& a, const torch::Tensor& a_src,
                                     const torch::Tensor& a_dst, double slope = 0.2) {
  auto s = a_dst.unsqueeze(1) + a_src.unsqueeze(0);  // [nd x ns x H]
  s = torch::leaky_relu(s, slope);
  const auto mask = dense_mask(a).unsqueeze(2).expand_as(s);
  s = s.masked_fill(mask.logical_not(), -std::numeric_limits<double>::infinity());
  return torch::softmax(s, 1);
}

// alpha of the dense formulation read back at the entries of a, [nnz x H].
inline torch::Tensor at_entries(const CsrTensor& a, const torch::Tensor& dense) {
  return dense.index({entry_rows(a), a.indices.to(torch::kLong)});
}

}  // namespace dgcn::testing
