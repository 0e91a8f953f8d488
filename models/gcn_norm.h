// GCN normalization of sampled blocks: the weighted CSR (self-loops
// included) that one GCN layer multiplies its input by. Plain C++ over the
// sampler's Block; the tensor bridge writes the result straight into tensor
// memory through the spans.
//
// Note [GCN normalization of a sampled block]
// Full-graph GCN: out_i = sum_{j in N(i) + i} x_j / sqrt((d_i + 1)(d_j + 1)),
// d = degree in the full graph (D̃^-1/2 (A + I) D̃^-1/2). A block holds k_i of
// i's d_i neighbours, drawn uniformly, so the neighbour part is rescaled by
// d_i / k_i to keep it an unbiased estimate of the full sum:
//   self weight      1 / (d_i + 1)
//   neighbour j      (d_i / k_i) / sqrt((d_i + 1)(d_j + 1))
// With every neighbour sampled (k_i = d_i) this is exactly full-graph GCN.
//
// GcnNorm::kBlock reproduces PyG's GCNConv on a NeighborLoader batch: the
// same formula with d = in-degree inside the (untrimmed) sampled subgraph,
// i.e. d_j = the number of sampled neighbours of j (0 for nodes of the last
// hop, which are never expanded). Then d_i = k_i and no rescaling happens.
//
// Example: dst 0 with full degree 3 and sampled neighbours {1, 2} (degrees 1
// and 3): self 1/4, to 1: (3/2)/sqrt(4*2), to 2: (3/2)/sqrt(4*4).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/parallel.h"
#include "graph/csr.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

enum class GcnNorm {
  kFullGraph,  // degrees of the full graph, sampled sums rescaled by d/k (default)
  kBlock,      // degrees inside the sampled subgraph, as PyG's GCNConv does on a batch
};
const char* gcn_norm_name(GcnNorm norm);       // "full", "block"
GcnNorm parse_gcn_norm(const std::string& s);  // inverse; throws dgcn::Error on other names

// A normalized adjacency written into caller-owned arrays: indptr
// [num_rows + 1], indices and values [nnz]. Row r lists r itself first (the
// self-loop), then its neighbours in block order.
struct NormalizedCsrOut {
  std::span<int64_t> indptr;
  std::span<int32_t> indices;
  std::span<float> values;
};

// Entries of the normalized block: its edges plus one self-loop per dst node.
inline int64_t normalized_nnz(const Block& block) {
  return block.num_edges() + block.num_dst;
}

// The degree each of the batch's nodes counts with, for `norm`, written into
// out[0 .. n_id.size()): kFullGraph gathers full_degree[n_id[j]] (or takes
// batch.degrees, when the sampler brought them along); kBlock
// counts j's sampled neighbours (its row length in blocks[0] if it is one of
// its dst nodes, else 0).
void batch_degrees(const SampledBatch& batch, GcnNorm norm, std::span<const int32_t> full_degree,
                   std::span<int32_t> out);

// Fills `out` for `block`, whose src node j has degree src_degree[j]
// (src_degree.size() >= block.num_src), rows in chunks on `loop`. Checks that
// no dst node has more sampled neighbours than its degree (that would mean
// the degrees belong to another graph) and throws dgcn::Error naming the node
// otherwise.
void normalize_block(const Block& block, std::span<const int32_t> src_degree, const NormalizedCsrOut& out,
                     const ChunkLoop& loop);

// The rows `rows` of the full graph, normalized (no sampling: k = d), for
// layer-wise full-neighbour inference. Indices stay global node ids (int32:
// the graph must have < 2^31 nodes). out.indptr has rows.size() + 1 entries;
// the caller sizes indices/values with full_rows_nnz().
int64_t full_rows_nnz(const Csr& graph, std::span<const int64_t> rows);
void normalize_full_rows(const Csr& graph, std::span<const int32_t> degree, std::span<const int64_t> rows,
                         const NormalizedCsrOut& out, const ChunkLoop& loop);

}  // namespace dgcn
