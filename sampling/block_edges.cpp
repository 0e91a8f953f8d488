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

}  // namespace dgcn
