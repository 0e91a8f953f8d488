#include "graph/symmetry.h"

#include <xxhash.h>
#include <algorithm>
#include <vector>

#include "base/parallel.h"
#include "graph/csr_builder.h"

namespace dgcn {

namespace {

constexpr uint64_t kSeeds[2] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full};

inline uint64_t pair_hash(int64_t a, int64_t b, uint64_t seed) {
  const int64_t pair[2] = {a, b};
  return XXH3_64bits_withSeed(pair, sizeof(pair), seed);
}

// Per-chunk partial sums of h(u, v) - h(v, u) for both seeds (wrapping).
template <class Id>
bool symmetric(std::span<const int64_t> p, std::span<const Id> idx, int64_t n, int threads) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<uint64_t> diff0(static_cast<size_t>(chunks), 0), diff1(static_cast<size_t>(chunks), 0);
  parallel_for_chunks(n, kChunk, threads, [&](int64_t begin, int64_t end) {
    uint64_t d0 = 0, d1 = 0;
    for (int64_t u = begin; u < end; ++u) {
      for (int64_t e = p[u]; e < p[u + 1]; ++e) {
        const int64_t v = idx[e];
        d0 += pair_hash(u, v, kSeeds[0]) - pair_hash(v, u, kSeeds[0]);
        d1 += pair_hash(u, v, kSeeds[1]) - pair_hash(v, u, kSeeds[1]);
      }
    }
    diff0[begin / kChunk] = d0;
    diff1[begin / kChunk] = d1;
  });
  uint64_t d0 = 0, d1 = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    d0 += diff0[c];
    d1 += diff1[c];
  }
  return d0 == 0 && d1 == 0;
}

}  // namespace

bool is_symmetric(const Csr& g, int num_threads) {
  require_whole_graph(g, "symmetry check");
  return g.visit_indices(
      [&](auto idx) { return symmetric(g.indptr(), idx, g.num_nodes(), std::max(1, num_threads)); });
}

Csr undirected_csr(const Csr& g, int num_threads, bool* copied) {
  require_whole_graph(g, "undirected copy");
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
