// The CSR positions of a batch's sampled edges: PyG's e_id for a batch of a
// store (python/dgcn/_edge_ids.py). The sampler reports each edge as a
// (neighbour, node) pair, not as its position in the store; finding the
// position again costs one search in the node's row per edge, O(sampled
// edges x log degree), and reads nothing else of the graph.
//
// Example (graph/csr.h's graph): indptr = [0, 2, 4, 7, 8],
// indices = [1, 2 | 0, 2 | 0, 1, 3 | 2]; the edges 3 -> 2 and 0 -> 1
// (src -> dst: src is in dst's row) are at positions 6 and 2.
#pragma once

#include <cstdint>
#include <span>

namespace dgcn {

// out[k]: the first position p in row dst[k] (indptr[dst[k]] <= p <
// indptr[dst[k] + 1]) with indices[p] == src[k]. Rows ascending
// (`rows_sorted`, as graph/csr_builder.h writes them) are binary searched,
// others scanned. Throws dgcn::Error naming the first edge whose ids are not
// nodes or that is not in its row. Id: int32_t or int64_t.
template <class Id>
void csr_positions(std::span<const int64_t> indptr, std::span<const Id> indices, std::span<const int64_t> src,
                   std::span<const int64_t> dst, bool rows_sorted, std::span<int64_t> out);

}  // namespace dgcn
