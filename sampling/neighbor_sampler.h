// Uniform neighbour sampling for mini-batch GCN training, with PyG's
// NeighborLoader semantics: from the seed nodes, sample up to fanouts[h]
// neighbours of every node first reached at hop h, and return the sampled
// nodes and one block per GCN layer (numbering and layout: sampled_batch.h).
//
//   SamplerOptions options{.fanouts = {15, 10, 5}};
//   SamplerScratch scratch;                       // one per concurrent caller
//   SampledBatch batch;                           // reused: keeps its capacity
//   sample_neighbors(store.graph, seeds, options, BatchKey{seed, epoch, b}, scratch, batch);
//
// The random choices of a batch are a pure function of (graph, seeds,
// options.fanouts, options.replace, key): any options.num_threads gives
// bit-identical batches. Finer still, the neighbours a node samples at hop h
// depend only on (key, h, the node, its row, its fanout): not on its position
// in the frontier (Note [Per-node draws] in cpu/row_picks.h), which is what
// partitioned sampling relies on to reproduce these batches exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/csr.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

struct SamplerOptions {
  // One fanout per layer, hop 0 (the seeds) first: at most fanouts[h]
  // neighbours of each node first reached at hop h; -1 takes all of them.
  std::vector<int64_t> fanouts;
  // false: without replacement (min(k, degree) distinct neighbours, all of
  // them when k >= degree). true: k independent uniform draws per node with at
  // least one neighbour, repeats kept as parallel edges (PyG's replace=True).
  bool replace = false;
  // Threads working on one batch (the frontier of a hop is split into fixed
  // chunks). 1 is best when many batches run side by side (the loader).
  int num_threads = 1;
};

// What decides a batch's random choices. `batch` must differ between the
// batches of one (seed, epoch), also across ranks (EpochPlan::key does that).
struct BatchKey {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
};

// Reusable working memory of the sampler: a dense node -> local id map of 4
// bytes per graph node (see Note [Relabelling map] in cpu/neighbor_kernel.h)
// plus per-hop and per-thread buffers. Allocated on first use, kept across
// batches and epochs. One scratch serves one sample_neighbors call at a time.
class SamplerScratch {
 public:
  SamplerScratch();
  ~SamplerScratch();
  SamplerScratch(SamplerScratch&&) noexcept;
  SamplerScratch& operator=(SamplerScratch&&) noexcept;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Samples one batch into `out` (overwritten; its vectors keep their capacity,
// so a caller that recycles batches allocates nothing in steady state).
// out.epoch = key.epoch and out.index = key.batch.
// Throws dgcn::Error when a seed is out of range or repeated, a fanout is
// below -1, there are no fanouts, or the graph has more than 2^31 - 1 nodes.
void sample_neighbors(const Csr& graph, std::span<const int64_t> seeds, const SamplerOptions& options,
                      const BatchKey& key, SamplerScratch& scratch, SampledBatch& out);

// Same, returning a fresh batch.
SampledBatch sample_neighbors(const Csr& graph, std::span<const int64_t> seeds, const SamplerOptions& options,
                              const BatchKey& key, SamplerScratch& scratch);

// Checks options on their own (fanouts non-empty and >= -1, num_threads >= 1);
// `what` names the caller in the message.
void check_sampler_options(const SamplerOptions& options, const char* what);

}  // namespace dgcn
