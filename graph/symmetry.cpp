#include "graph/symmetry.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "graph/csr_builder.h"
#include "graph/parallel.h"

namespace dgcn {

namespace {

template <class Id>
bool symmetric(std::span<const int64_t> p, std::span<const Id> idx, int64_t n, int threads) {
  std::atomic<bool> ok{true};
  // Sorted rows first: the reverse lookups below are binary searches.
  parallel_for_chunks(n, 4096, threads, [&](int64_t begin, int64_t end) {
    if (!ok.load(std::memory_order_relaxed)) return;
    for (int64_t v = begin; v < end; ++v) {
      if (!std::is_sorted(idx.begin() + p[v], idx.begin() + p[v + 1])) {
        ok = false;
        return;
      }
    }
  });
  if (!ok) return false;
  parallel_for_chunks(n, 4096, threads, [&](int64_t begin, int64_t end) {
    if (!ok.load(std::memory_order_relaxed)) return;
    for (int64_t u = begin; u < end; ++u) {
      for (int64_t e = p[u]; e < p[u + 1]; ++e) {
        const int64_t v = idx[e];
        if (v == u) continue;
        if (!std::binary_search(idx.begin() + p[v], idx.begin() + p[v + 1], static_cast<Id>(u))) {
          ok = false;
          return;
        }
      }
    }
  });
  return ok;
}

}  // namespace

bool is_symmetric(const Csr& g, int num_threads) {
  return g.visit_indices(
      [&](auto idx) { return symmetric(g.indptr(), idx, g.num_nodes(), std::max(1, num_threads)); });
}

Csr undirected_csr(const Csr& g, int num_threads, bool* copied) {
  const bool sym = is_symmetric(g, num_threads);
  if (copied != nullptr) *copied = !sym;
  if (sym) return g;
  // Expand the entries to an edge list and let build_csr symmetrize it.
  const int64_t m = g.num_edges();
  std::vector<int64_t> src(static_cast<size_t>(m)), dst(static_cast<size_t>(m));
  auto p = g.indptr();
  g.visit_indices([&](auto idx) {
    parallel_for_chunks(g.num_nodes(), 4096, num_threads, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        for (int64_t e = p[u]; e < p[u + 1]; ++e) {
          src[e] = u;
          dst[e] = idx[e];
        }
      }
    });
  });
  EdgeOptions o;
  o.symmetrize = true;
  o.drop_self_loops = false;
  o.drop_duplicates = true;
  return build_csr(g.num_nodes(), src, dst, o, num_threads, "undirected copy of a directed CSR");
}

}  // namespace dgcn
