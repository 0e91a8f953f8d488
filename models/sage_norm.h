// Mean-aggregation weights of GraphSAGE (PyG's SAGEConv, aggr="mean") for
// sampled blocks and full-graph rows: the CSR that SpMM multiplies by to
// average each dst node's neighbours. Plain C++; the tensor side
// (models/sage.h) writes straight into tensor memory through the spans.
//
// Note [SAGE mean of a sampled block]
// Row i holds i's k_i sampled neighbours (no self-loop: SAGE adds x_i
// through its own weight, lin_r), each weighted 1 / k_i. The k_i are drawn
// uniformly without replacement from i's d_i neighbours, so every neighbour
// is in the sample with probability k_i / d_i and the sampled mean is an
// unbiased estimate of the full mean (1 / d_i over all neighbours) that
// full-neighbour inference computes. Unlike GCN's sum (Note [GCN
// normalization of a sampled block]) no d/k rescaling is needed: the mean
// already divides by the count it sums. A row with no neighbours is empty
// (mean 0, as PyG's scatter-mean gives). PyG's SAGEConv on a NeighborLoader
// batch averages the same edges, so the two agree on the same batch.
//
// Example: dst 0 with sampled neighbours {1, 2, 5}: indices [1, 2, 5],
// values [1/3, 1/3, 1/3].
#pragma once

#include <cstdint>
#include <span>

#include "base/parallel.h"
#include "graph/csr.h"
#include "models/gcn_norm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

// Entries of the mean CSR of `block`: its edges, in block order.
inline int64_t sage_block_nnz(const Block& block) {
  return block.num_edges();
}

// Fills `out` (indptr [num_dst + 1], indices and values [num_edges]) with
// the block's edges weighted 1 / (row length), rows in chunks on `loop`.
void sage_mean_block(const Block& block, const NormalizedCsrOut& out, const ChunkLoop& loop);

// The rows `rows` of the full graph with weights 1 / degree, for layer-wise
// full-neighbour inference; indices stay global node ids (int32: the graph
// must have < 2^31 nodes). out.indptr has rows.size() + 1 entries; size
// indices and values with sage_full_rows_nnz().
int64_t sage_full_rows_nnz(const Csr& graph, std::span<const int64_t> rows);
void sage_mean_full_rows(const Csr& graph, std::span<const int64_t> rows, const NormalizedCsrOut& out,
                         const ChunkLoop& loop);

}  // namespace dgcn
