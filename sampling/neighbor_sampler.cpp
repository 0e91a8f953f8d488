// Front end of sample_neighbors: checks the inputs, then dispatches to the
// kernel compiled for the graph's index width (cpu/neighbor_kernel.cpp).
#include "sampling/neighbor_sampler.h"

#include <cstdint>

#include "base/error.h"
#include "sampling/cpu/neighbor_kernel.h"

namespace dgcn {

SamplerScratch::SamplerScratch() : impl_(std::make_unique<Impl>()) {}
SamplerScratch::~SamplerScratch() = default;
SamplerScratch::SamplerScratch(SamplerScratch&&) noexcept = default;
SamplerScratch& SamplerScratch::operator=(SamplerScratch&&) noexcept = default;

void check_sampler_options(const SamplerOptions& options, const char* what) {
  DGCN_CHECK(!options.fanouts.empty(), "{}: fanouts is empty; give one per layer, e.g. 15,10,5", what);
  for (size_t h = 0; h < options.fanouts.size(); ++h) {
    DGCN_CHECK(options.fanouts[h] >= -1, "{}: fanouts[{}] = {}; a fanout is >= 0, or -1 for all neighbours",
               what, h, options.fanouts[h]);
  }
  DGCN_CHECK(options.num_threads >= 1, "{}: num_threads = {}, expected >= 1", what, options.num_threads);
}

void sample_neighbors(const Csr& graph, std::span<const int64_t> seeds, const SamplerOptions& options,
                      const BatchKey& key, SamplerScratch& scratch, SampledBatch& out) {
  require_whole_graph(graph, "sample_neighbors");
  check_sampler_options(options, "sample_neighbors");
  const int64_t n = graph.num_nodes();
  // Local ids are int32 (Block::indices) and the relabelling map holds 32-bit
  // values (Note [Relabelling map]).
  DGCN_CHECK(n <= INT32_MAX, "sample_neighbors: the graph has {} nodes; the sampler supports at most {}", n,
             INT32_MAX);
  for (size_t i = 0; i < seeds.size(); ++i) {
    DGCN_CHECK(seeds[i] >= 0 && seeds[i] < n, "sample_neighbors: seeds[{}] = {} is not a node id in [0, {})",
               i, seeds[i], n);
  }
  graph.visit_indices([&](auto indices) {
    sample_neighbors_kernel(graph, indices, seeds, options, key, scratch.impl(), out);
  });
}

SampledBatch sample_neighbors(const Csr& graph, std::span<const int64_t> seeds, const SamplerOptions& options,
                              const BatchKey& key, SamplerScratch& scratch) {
  SampledBatch out;
  sample_neighbors(graph, seeds, options, key, scratch, out);
  return out;
}

}  // namespace dgcn
