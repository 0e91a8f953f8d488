#include "sampling/edge_positions.h"

#include <algorithm>

#include "base/error.h"

namespace dgcn {

template <class Id>
void csr_positions(std::span<const int64_t> indptr, std::span<const Id> indices, std::span<const int64_t> src,
                   std::span<const int64_t> dst, bool rows_sorted, std::span<int64_t> out) {
  DGCN_CHECK(!indptr.empty(), "csr_positions: indptr is empty (a CSR has num_nodes + 1 entries)");
  const auto n = static_cast<int64_t>(indptr.size()) - 1;
  DGCN_CHECK(src.size() == dst.size() && out.size() == dst.size(),
             "csr_positions: src, dst and out hold {}, {} and {} entries (one per edge)", src.size(),
             dst.size(), out.size());
  for (size_t k = 0; k < dst.size(); ++k) {
    const int64_t u = src[k], v = dst[k];
    DGCN_CHECK(u >= 0 && u < n && v >= 0 && v < n,
               "csr_positions: edge {} ({} -> {}) is not a pair of node ids in [0, {})", k, u, v, n);
    const Id* begin = indices.data() + indptr[v];
    const Id* end = indices.data() + indptr[v + 1];
    const Id* at = rows_sorted ? std::lower_bound(begin, end, static_cast<Id>(u))
                               : std::find(begin, end, static_cast<Id>(u));
    DGCN_CHECK(at != end && *at == u, "csr_positions: sampled edge {} ({} -> {}) is not in the CSR row of {}",
               k, u, v, v);
    out[k] = at - indices.data();
  }
}

template void csr_positions<int32_t>(std::span<const int64_t>, std::span<const int32_t>,
                                     std::span<const int64_t>, std::span<const int64_t>, bool,
                                     std::span<int64_t>);
template void csr_positions<int64_t>(std::span<const int64_t>, std::span<const int64_t>,
                                     std::span<const int64_t>, std::span<const int64_t>, bool,
                                     std::span<int64_t>);

}  // namespace dgcn
